package topology

import (
	_ "embed" // the example graph file
	"strings"
)

//go:embed testdata/example.graph
var exampleGraph string

// ExampleGraph returns the commented example network of the graph file
// format (testdata/example.graph, embedded): 10 wormhole routers and 16
// terminals in an irregular topology.
func ExampleGraph() *Graph {
	g, err := ParseGraph(strings.NewReader(exampleGraph))
	if err != nil {
		panic("topology: the embedded example graph does not parse: " + err.Error())
	}
	return g
}

package cashapps

import (
	"fmt"
	"strings"
)

// Names lists the programs Default knows, in the order of Table 2 (CLU, LU,
// Gauss, SOR, Em3d, Water).
func Names() []string { return []string{"clu", "lu", "gauss", "sor", "em3d", "water"} }

// Default is the named program at its CI size (each Default*Config).
func Default(name string) (Program, error) {
	switch name {
	case "sor":
		return NewSOR(DefaultSOR())
	case "gauss":
		return NewGauss(DefaultGauss())
	case "lu":
		return NewLU(DefaultLU())
	case "clu":
		return NewLU(DefaultCLU())
	case "em3d":
		return NewEm3d(DefaultEm3d())
	case "water":
		return NewWater(DefaultWater())
	}
	return nil, fmt.Errorf("cashapps: app = %q: unknown; one of %s", name, strings.Join(Names(), ", "))
}

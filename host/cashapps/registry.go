package cashapps

import (
	"fmt"
	"slices"
	"strings"
)

// Names lists the programs Default knows, in the order of Table 2 (CLU, LU,
// Gauss, SOR, Em3d, Water).
func Names() []string { return []string{"clu", "lu", "gauss", "sor", "em3d", "water"} }

// Default is the named program at its CI size (each Default*Config).
func Default(name string) (Program, error) { return Build(name, nil) }

// Keys lists the size parameters Build accepts for the named program (nil
// for an unknown name).
func Keys(name string) []string {
	switch name {
	case "sor":
		return []string{"rows", "cols", "iters"}
	case "gauss":
		return []string{"n", "row_words"}
	case "lu", "clu":
		return []string{"n", "block"}
	case "em3d":
		return []string{"nodes", "degree", "span", "iters", "seed"}
	case "water":
		return []string{"molecules", "steps", "groups"}
	}
	return nil
}

// Build is the named program at its CI size with the parameters in set
// replacing the defaults (keys as Keys lists them; a scenario's
// `--set sor.rows=64` would pass {"rows": 64}). An unknown name or key, or a
// value the constructor refuses, is a one-line error naming it.
func Build(name string, set map[string]int) (Program, error) {
	keys := Keys(name)
	if keys == nil {
		return nil, fmt.Errorf("cashapps: app = %q: unknown; one of %s", name, strings.Join(Names(), ", "))
	}
	unknown := make([]string, 0)
	for k := range set {
		if !slices.Contains(keys, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return nil, fmt.Errorf("cashapps: %s: unknown parameter %q; one of %s", name, unknown[0], strings.Join(keys, ", "))
	}
	get := func(k string, v *int) {
		if x, ok := set[k]; ok {
			*v = x
		}
	}
	switch name {
	case "sor":
		c := DefaultSOR()
		get("rows", &c.Rows)
		get("cols", &c.Cols)
		get("iters", &c.Iters)
		return NewSOR(c)
	case "gauss":
		c := DefaultGauss()
		get("n", &c.N)
		get("row_words", &c.RowWords)
		return NewGauss(c)
	case "lu", "clu":
		c := DefaultLU()
		if name == "clu" {
			c = DefaultCLU()
		}
		get("n", &c.N)
		get("block", &c.Block)
		return NewLU(c)
	case "em3d":
		c := DefaultEm3d()
		get("nodes", &c.Nodes)
		get("degree", &c.Degree)
		get("span", &c.Span)
		get("iters", &c.Iters)
		seed := int(c.Seed)
		get("seed", &seed)
		if seed < 0 {
			return nil, fmt.Errorf("em3d: seed = %d: need >= 0", seed)
		}
		c.Seed = uint64(seed)
		return NewEm3d(c)
	default: // water
		c := DefaultWater()
		get("molecules", &c.Molecules)
		get("steps", &c.Steps)
		get("groups", &c.Groups)
		return NewWater(c)
	}
}

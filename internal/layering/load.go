package layering

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// goList runs `go` with args in dir and returns its output; a failure
// carries the command and its error output.
func goList(dir string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// Root returns the directory of the module that holds dir.
func Root(dir string) (string, error) {
	gomod, err := goList(dir, "env", "GOMOD")
	if err != nil {
		return "", err
	}
	gomod = strings.TrimSpace(gomod)
	if gomod == "" || gomod == "/dev/null" {
		return "", fmt.Errorf("%s: not inside a module", dir)
	}
	return filepath.Dir(gomod), nil
}

// Load reads the import graph of the module rooted at root with `go list`
// (packages with errors included: a package that does not build still has
// imports), and the name of every package the module's packages and their
// tests import, standard library and third-party ones included.
func Load(root string) (Graph, map[string]string, error) {
	mod, err := goList(root, "list", "-m")
	if err != nil {
		return Graph{}, nil, err
	}
	g := Graph{Module: strings.TrimSpace(mod)}
	out, err := goList(root, "list", "-e", "-f",
		"{{.ImportPath}}\t{{join .Imports \" \"}}\t{{join .TestImports \" \"}} {{join .XTestImports \" \"}}", "./...")
	if err != nil {
		return Graph{}, nil, err
	}
	for line := range strings.Lines(out) {
		f := strings.Split(strings.TrimRight(line, "\n"), "\t")
		if len(f) != 3 {
			return Graph{}, nil, fmt.Errorf("go list: unexpected line %q", line)
		}
		rel, ok := g.relative(f[0])
		if !ok {
			continue
		}
		p := Package{Path: rel, Imports: g.inModule(strings.Fields(f[1]))}
		p.TestImports = g.inModule(strings.Fields(f[2]))
		g.Packages = append(g.Packages, p)
	}
	slices.SortFunc(g.Packages, func(a, b Package) int { return strings.Compare(a.Path, b.Path) })
	out, err = goList(root, "list", "-e", "-deps", "-test", "-f", "{{.ImportPath}}\t{{.Name}}", "./...")
	if err != nil {
		return Graph{}, nil, err
	}
	names := map[string]string{}
	for line := range strings.Lines(out) {
		path, name, ok := strings.Cut(strings.TrimRight(line, "\n"), "\t")
		if !ok {
			return Graph{}, nil, fmt.Errorf("go list: unexpected line %q", line)
		}
		// A test variant is listed as "path [pkg.test]".
		path, _, _ = strings.Cut(path, " ")
		if name != "" {
			names[path] = name
		}
	}
	return g, names, nil
}

// relative returns path relative to the module, if it is in it ("" for
// the module's root package).
func (g Graph) relative(path string) (string, bool) {
	if path == g.Module {
		return "", true
	}
	return strings.CutPrefix(path, g.Module+"/")
}

// inModule keeps the imports of module packages, relative to the module,
// sorted and without repeats.
func (g Graph) inModule(paths []string) []string {
	var out []string
	for _, p := range paths {
		if rel, ok := g.relative(p); ok && !slices.Contains(out, rel) {
			out = append(out, rel)
		}
	}
	slices.Sort(out)
	return out
}

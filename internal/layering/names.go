package layering

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// File is one Go file: its path (relative to the root it was read from),
// its package clause and its imports.
type File struct {
	Path    string
	Package string
	Imports []Import
}

// Import is one import declaration: the path and the name it is given
// ("" if none, "_" or "." as written).
type Import struct {
	Path, Alias string
}

// skipDir reports whether a directory holds no Go source of the tree: as
// for the go command, testdata and names starting with "." or "_"; and,
// at the root, the git-ignored outputs and scratch area.
func skipDir(rel, name string) bool {
	if rel == "." {
		return false
	}
	if name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
		return true
	}
	return !strings.Contains(rel, string(filepath.Separator)) && (name == "out" || name == "bin" || name == "scratch")
}

// ParseFiles reads the package clause and imports of every .go file under
// root (test files included), in path order.
func ParseFiles(root string) ([]File, error) {
	var files []File
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			if skipDir(rel, d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		af, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return fmt.Errorf("layering: %w", err)
		}
		f := File{Path: filepath.ToSlash(rel), Package: af.Name.Name}
		for _, is := range af.Imports {
			p, err := strconv.Unquote(is.Path.Value)
			if err != nil {
				return fmt.Errorf("layering: %s: import %s: %w", rel, is.Path.Value, err)
			}
			im := Import{Path: p}
			if is.Name != nil {
				im.Alias = is.Name.Name
			}
			f.Imports = append(f.Imports, im)
		}
		files = append(files, f)
		return nil
	})
	return files, err
}

// NameViolation is a file that imports two packages of one name, or a
// package named like its own.
type NameViolation struct {
	File string
	Name string
	// Paths are the imported packages called Name.
	Paths []string
	// Own says that Name is the file's own package's name.
	Own bool
}

// String says what is wrong on one line.
func (v NameViolation) String() string {
	if v.Own {
		return fmt.Sprintf("%s: package %s imports %s, of the same name", v.File, v.Name, strings.Join(v.Paths, ", "))
	}
	return fmt.Sprintf("%s: imports %s, all named %s", v.File, strings.Join(v.Paths, " and "), v.Name)
}

var majorVersion = regexp.MustCompile(`^v[0-9]+$`)

// guessName is the name of an import path go list did not report (a file
// outside the build, say): its last element that is not a major version.
func guessName(path string) string {
	el := strings.Split(path, "/")
	name := el[len(el)-1]
	if majorVersion.MatchString(name) && len(el) > 1 {
		name = el[len(el)-2]
	}
	return name
}

// CheckNames returns, per file in order, each name that two of its imports
// share and each import named like the file's package. names maps import
// paths to package names (Load); blank imports are not judged. The names
// are the packages' own, whatever alias a file gives them: an alias hides
// the clash in the file but not in the reader's head.
func CheckNames(files []File, names map[string]string) []NameViolation {
	var out []NameViolation
	for _, f := range files {
		byName := map[string][]string{} // lookup only: the output follows the file's order
		var order []string
		for _, im := range f.Imports {
			if im.Alias == "_" {
				continue
			}
			n, ok := names[im.Path]
			if !ok {
				n = guessName(im.Path)
			}
			if _, seen := byName[n]; !seen {
				order = append(order, n)
			}
			byName[n] = append(byName[n], im.Path)
		}
		for _, n := range order {
			paths := byName[n]
			if n == f.Package {
				out = append(out, NameViolation{File: f.Path, Name: n, Paths: slices.Clone(paths), Own: true})
			}
			if len(paths) > 1 {
				out = append(out, NameViolation{File: f.Path, Name: n, Paths: slices.Clone(paths)})
			}
		}
	}
	return out
}

package external

import (
	"bytes"
	"embed"
	"fmt"
	"regexp"
	"strings"
	"text/template"
)

// The starter's templates and the Python module it copies.
//
//go:embed starter/*.tmpl python/aegis_policy.py
var starterFS embed.FS

// Starter describes the files of a new external policy (aegis policies
// new): a Python script with its tests and a copy of the Python module, or a
// Go main that calls Serve, with its tests and a go.mod.
type Starter struct {
	// Name is the policy's name: a lower-case identifier, also the
	// script's or the Go module's name.
	Name string
	// Lang is "python" or "go".
	Lang string
	// Dir is the directory the files go into, as the user will name it in
	// commands (the instructions in the files use it).
	Dir string
	// Aegis is the path of the aegis checkout a Go policy builds against
	// (its go.mod's replace directive).
	Aegis string
	// GoVersion is the go directive of a Go policy's go.mod.
	GoVersion string
}

// starterName is what a policy's name may be: it names a Python module and
// a Go module.
var starterName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// Files returns the starter's files by name (relative to Dir).
func (s Starter) Files() (map[string][]byte, error) {
	if !starterName.MatchString(s.Name) || s.Name == "aegis_policy" || strings.HasPrefix(s.Name, "test_") {
		return nil, fmt.Errorf("policy name %q: want a lower-case identifier (a-z, 0-9, _), not aegis_policy or test_*", s.Name)
	}
	var names map[string]string // file -> template
	switch s.Lang {
	case "python":
		names = map[string]string{s.Name + ".py": "policy.py.tmpl", "test_" + s.Name + ".py": "test_policy.py.tmpl"}
	case "go":
		if s.Aegis == "" || s.GoVersion == "" {
			return nil, fmt.Errorf("a Go policy needs the path of the aegis checkout and the Go version it builds with")
		}
		names = map[string]string{"main.go": "main.go.tmpl", "main_test.go": "main_test.go.tmpl", "go.mod": "go.mod.tmpl"}
	default:
		return nil, fmt.Errorf("language %q: want python or go", s.Lang)
	}
	data := struct {
		Starter
		Class string
	}{s, className(s.Name)}
	out := map[string][]byte{}
	for file, tmpl := range names {
		// $[ ]$ around a field: Go's composite literals have {{ and }}.
		t, err := template.New(tmpl).Delims("$[", "]$").ParseFS(starterFS, "starter/"+tmpl)
		if err != nil {
			return nil, err
		}
		var b bytes.Buffer
		if err := t.Execute(&b, data); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		out[file] = b.Bytes()
	}
	if s.Lang == "python" {
		m, err := starterFS.ReadFile("python/aegis_policy.py")
		if err != nil {
			return nil, err
		}
		out["aegis_policy.py"] = m
	}
	return out, nil
}

// className is a Python class name for a policy name (which starts with a
// letter): my_rule -> MyRule.
func className(name string) string {
	var b strings.Builder
	for _, w := range strings.Split(name, "_") {
		if w != "" {
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	return b.String()
}

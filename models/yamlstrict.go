package models

import "go.yaml.in/yaml/v3"

// DecodeYAMLStrict decodes exactly one YAML document of data into v (a
// pointer to a struct with yaml tags) and returns the document's node tree
// for line look-ups. An empty input, a second document, an unknown key (with
// the section's valid keys and a likely correction), a key given twice or a
// value of the wrong kind is an error reading "name:LINE: ..."; lists of
// structs are checked element by element. Other packages' YAML formats (the
// experiment specs) use it so that all of them report errors alike.
func DecodeYAMLStrict(data []byte, name string, v any) (*yaml.Node, error) {
	return decodeStrict(data, name, v)
}

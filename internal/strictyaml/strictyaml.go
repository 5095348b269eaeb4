// Package strictyaml reads and writes the project's YAML files alike:
// Decode takes exactly one document into a struct and refuses an unknown
// key (listing the valid ones, with a likely correction), a key given
// twice or a value of the wrong kind with "name:LINE: ..." errors; KeyLine,
// HasKey and MappingKey find keys in the decoded node tree for errors of
// the caller's own checks; Write writes a value under '#' comment lines.
// The models' files, the experiment specs and the executor's workloads use
// it.
package strictyaml

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/aegis-sched/aegis/internal/suggest"
)

// Write writes v as YAML (indent 2) preceded by comment as '#' lines.
func Write(w io.Writer, v any, comment string) error {
	var b bytes.Buffer
	for _, l := range strings.Split(strings.TrimRight(comment, "\n"), "\n") {
		if comment != "" {
			b.WriteString("# " + l + "\n")
		}
	}
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

// Decode decodes exactly one YAML document of data into v (a pointer
// to a struct with yaml tags) and returns the document's node tree for line
// look-ups. Before decoding, it checks the document against v's type
// (checker), so that an unknown key, a key given twice or a value of the
// wrong kind reads "name:LINE: ..." in the file's own terms: the key, the
// valid keys there, the kind of value wanted. Several errors (at most
// maxErrors) are reported one per line.
func Decode(data []byte, name string, v any) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var root yaml.Node
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: empty document", name)
		}
		return nil, decodeError(name, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, decodeError(name, err)
		}
		return nil, fmt.Errorf("%s:%d: a second YAML document; want one", name, extra.Line)
	}
	doc := &root
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		doc = doc.Content[0]
	}
	if doc.Kind == yaml.ScalarNode && doc.Tag == "!!null" {
		return nil, fmt.Errorf("%s: empty document", name)
	}
	c := checker{name: name, seen: map[mergeSource]bool{}, listed: map[string]bool{}}
	c.walk(doc, reflect.TypeOf(v), "")
	if n := len(c.errs); n > maxErrors {
		c.errs = append(c.errs[:maxErrors], fmt.Sprintf("%d more errors", n-maxErrors))
	}
	if len(c.errs) > 0 {
		return nil, errors.New(strings.Join(c.errs, "\n"))
	}
	if err := root.Decode(v); err != nil { // rare after the check (alias loops)
		return nil, decodeError(name, err)
	}
	return &root, nil
}

// maxErrors is the most errors Decode reports at once.
const maxErrors = 10

// checker checks a YAML node tree against the Go type it will be
// decoded into, collecting errors in document order.
type checker struct {
	name   string
	errs   []string
	seen   map[mergeSource]bool // merged mappings walked (against alias loops)
	listed map[string]bool      // sections whose valid keys an error listed
}

// mergeSource is a mapping merged into a value of type t.
type mergeSource struct {
	n *yaml.Node
	t reflect.Type
}

func (c *checker) errorf(line int, format string, a ...any) {
	c.errs = append(c.errs, fmt.Sprintf("%s:%d: ", c.name, line)+fmt.Sprintf(format, a...))
}

// walk checks node n, found at the dotted key path, against type t: every
// key of a struct mapping must be one of its yaml keys, given once; every
// other value must decode into its field's type. The first unknown key of a
// section lists the section's valid keys.
func (c *checker) walk(n *yaml.Node, t reflect.Type, path string) {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return // decodes as the zero value; the caller checks required keys
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		if n.Kind != yaml.MappingNode {
			c.kindError(n, t, path)
			return
		}
		first := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Tag == "!!merge" {
				c.merge(v, t, path)
				continue
			}
			key := k.Value
			if k.Kind != yaml.ScalarNode {
				key = "(" + nodeKind(k) + ")"
			}
			var ft reflect.Type
			if t.Kind() == reflect.Map {
				ft = t.Elem()
			} else {
				keys, fields := structKeys(t)
				var ok bool
				if ft, ok = fields[key]; !ok || k.Kind != yaml.ScalarNode {
					valid := ""
					if !c.listed[path] { // once per section
						c.listed[path] = true
						valid = "; valid keys: " + strings.Join(keys, ", ")
					}
					c.errorf(k.Line, "unknown key %q%s%s%s", key, inSection(path), valid, suggest.DidYouMean(key, keys))
					continue
				}
			}
			if l, dup := first[key]; dup {
				c.errorf(k.Line, "%s: given twice (first at line %d)", joinKey(path, key), l)
				continue
			}
			first[key] = k.Line
			c.walk(v, ft, joinKey(path, key))
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			if err := n.Decode(reflect.New(t).Interface()); err != nil {
				c.kindError(n, t, path)
			}
			return
		}
		for i, e := range n.Content {
			c.walk(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i))
		}
	default:
		if isInteger(t) && n.Kind == yaml.ScalarNode && n.ShortTag() != "!!int" {
			// The decoder would truncate 1.5 and wrap 2^64 (floats to it).
			c.kindError(n, t, path)
			return
		}
		if err := n.Decode(reflect.New(t).Interface()); err != nil {
			c.kindError(n, t, path)
		}
	}
}

// isInteger reports whether t is an integer kind.
func isInteger(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

// merge walks the mapping(s) a "<<" merge key brings into a mapping of
// type t.
func (c *checker) merge(v *yaml.Node, t reflect.Type, path string) {
	if v.Kind == yaml.AliasNode && v.Alias != nil {
		v = v.Alias
	}
	if c.seen[mergeSource{v, t}] {
		return
	}
	c.seen[mergeSource{v, t}] = true
	if v.Kind == yaml.SequenceNode {
		for _, m := range v.Content {
			c.merge(m, t, path)
		}
		return
	}
	c.walk(v, t, path)
}

// kindError reports that n is not the kind of value type t wants.
func (c *checker) kindError(n *yaml.Node, t reflect.Type, path string) {
	var want string
	switch t.Kind() {
	case reflect.Bool:
		want = "true or false"
	case reflect.Float32, reflect.Float64:
		want = "a number"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		want = "a whole number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		want = fmt.Sprintf("a whole number from 0 to %d", uint64(1)<<(t.Bits()-1)*2-1)
	case reflect.String:
		want = "a string"
	case reflect.Struct:
		keys, _ := structKeys(t)
		want = "a mapping with keys " + strings.Join(keys, ", ")
	case reflect.Map:
		want = "a mapping"
	case reflect.Slice:
		want = "a list"
	default:
		want = "a " + t.Kind().String()
	}
	what := path
	if what == "" {
		what = "document"
	}
	c.errorf(n.Line, "%s: want %s, got %s", what, want, nodeKind(n))
}

// nodeKind describes a YAML node for error messages: a scalar quoted (long
// ones cut), else its kind.
func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.ScalarNode:
		v := n.Value
		if r := []rune(v); len(r) > 40 {
			v = string(r[:37]) + "..."
		}
		return strconv.Quote(v)
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	case yaml.AliasNode:
		return "an alias"
	}
	return "nothing"
}

// structKeys lists the yaml keys of struct type t in declaration order and
// maps each to its field's type.
func structKeys(t reflect.Type) ([]string, map[string]reflect.Type) {
	var keys []string
	fields := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		k, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if k == "-" {
			continue
		}
		if k == "" {
			k = strings.ToLower(f.Name)
		}
		keys = append(keys, k)
		fields[k] = f.Type
	}
	return keys, fields
}

func joinKey(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func inSection(path string) string {
	if path == "" {
		return ""
	}
	return " in " + path
}

// decodeError rewrites yaml's "line N: msg" errors as "name:N: msg".
func decodeError(name string, err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs := make([]string, len(te.Errors))
		for i, m := range te.Errors {
			msgs[i] = name + ":" + strings.TrimPrefix(m, "line ")
		}
		return errors.New(strings.Join(msgs, "; "))
	}
	s := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(s, "line "); ok {
		return fmt.Errorf("%s:%s", name, rest)
	}
	return fmt.Errorf("%s: %s", name, s)
}

// lookup walks mapping keys from the document root; it returns the key
// node of the last element found and whether the whole path exists.
func lookup(root *yaml.Node, path ...string) (*yaml.Node, bool) {
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	last := n
	for _, k := range path {
		if n.Kind != yaml.MappingNode {
			return last, false
		}
		kn, vn := mappingKey(n, k, 0)
		if kn == nil {
			return last, false
		}
		last, n = kn, vn
	}
	return last, true
}

// mappingKey finds key k in mapping n, or in the mappings its "<<" merge
// keys bring in (as yaml decodes them: the mapping's own keys first), and
// returns the key and value nodes (nil when absent).
func mappingKey(n *yaml.Node, k string, depth int) (*yaml.Node, *yaml.Node) {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind != yaml.MappingNode || depth > 8 {
		return nil, nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Tag != "!!merge" && n.Content[i].Value == k {
			return n.Content[i], n.Content[i+1]
		}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Tag != "!!merge" {
			continue
		}
		v := n.Content[i+1]
		if v.Kind == yaml.AliasNode && v.Alias != nil {
			v = v.Alias
		}
		srcs := []*yaml.Node{v}
		if v.Kind == yaml.SequenceNode {
			srcs = v.Content
		}
		for _, m := range srcs {
			if kn, vn := mappingKey(m, k, depth+1); kn != nil {
				return kn, vn
			}
		}
	}
	return nil, nil
}

// MappingKey finds key k in mapping n, or in the mappings its "<<" merge
// keys bring in (as yaml decodes them: the mapping's own keys first), and
// returns the key and value nodes (nil when absent).
func MappingKey(n *yaml.Node, k string) (key, value *yaml.Node) { return mappingKey(n, k, 0) }

// KeyLine is the line of the key at path, or of its deepest present parent.
func KeyLine(root *yaml.Node, path ...string) int {
	n, _ := lookup(root, path...)
	return n.Line
}

// HasKey reports whether the key at path is in the document.
func HasKey(root *yaml.Node, path ...string) bool {
	_, ok := lookup(root, path...)
	return ok
}

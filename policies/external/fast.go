package external

import (
	"bytes"
	"slices"
	"strconv"
)

// fastActions reads an actions line of the compact form the Python module
// and Serve write, {"msg":"actions","actions":[{...},...]}, without
// encoding/json's reflection: most answers with a job pending are of this
// form (a placement, or a deferral on every GPU). It accepts a subset of
// what ParseReply accepts, to the same actions (FuzzFastActions holds it
// to that): no whitespace, strings of printable ASCII without escapes,
// integers without fraction or exponent. Anything else is not ok, and
// the caller asks ParseReply.
func fastActions(line []byte, acts []wireAction) ([]wireAction, bool) {
	const head, tail = `{"msg":"actions","actions":[`, `]}`
	if !bytes.HasPrefix(line, []byte(head)) || !bytes.HasSuffix(line, []byte(tail)) {
		return nil, false
	}
	p := fastParser{b: line[len(head) : len(line)-len(tail)]}
	acts = acts[:0]
	for len(p.b) > 0 {
		if len(acts) > 0 && !p.lit(",") {
			return nil, false
		}
		a, ok := p.action()
		if !ok || a.check() != nil {
			return nil, false
		}
		acts = append(acts, a)
	}
	return acts, true
}

// fastParser reads JSON values off the front of b.
type fastParser struct{ b []byte }

// lit consumes s if b starts with it.
func (p *fastParser) lit(s string) bool {
	if !bytes.HasPrefix(p.b, []byte(s)) {
		return false
	}
	p.b = p.b[len(s):]
	return true
}

// actionKeys are wireAction's keys.
var actionKeys = [...]string{"kind", "job", "gpus", "gpu", "reason", "at"}

// action reads one action object; a key not of wireAction, or one given
// twice, is not ok.
func (p *fastParser) action() (a wireAction, ok bool) {
	if !p.lit("{") {
		return a, false
	}
	var seen [len(actionKeys)]bool
	for i := 0; !p.lit("}"); i++ {
		if i > 0 && !p.lit(",") {
			return a, false
		}
		key, ok := p.str()
		if !ok || !p.lit(":") {
			return a, false
		}
		k := slices.Index(actionKeys[:], key)
		if k < 0 || seen[k] {
			return a, false
		}
		seen[k] = true
		switch key {
		case "kind":
			a.Kind, ok = p.str()
		case "reason":
			a.Reason, ok = p.str()
		case "job":
			a.Job, ok = p.intPtr()
		case "gpu":
			a.GPU, ok = p.intPtr()
		case "gpus":
			a.GPUs, ok = p.ints()
		case "at":
			a.At, ok = p.float()
		}
		if !ok {
			return a, false
		}
	}
	return a, true
}

// str reads a string of printable ASCII without escapes.
func (p *fastParser) str() (string, bool) {
	if !p.lit(`"`) {
		return "", false
	}
	for i, c := range p.b {
		switch {
		case c == '"':
			s := string(p.b[:i])
			p.b = p.b[i+1:]
			return s, true
		case c < 0x20 || c > 0x7e || c == '\\':
			return "", false
		}
	}
	return "", false
}

// num is the length of the JSON number at the front of b (0: none), and
// whether it is an integer (no fraction, no exponent).
func (p *fastParser) num() (n int, integer bool) {
	b := p.b
	if n < len(b) && b[n] == '-' {
		n++
	}
	digits := func() int {
		k := 0
		for n+k < len(b) && b[n+k] >= '0' && b[n+k] <= '9' {
			k++
		}
		n += k
		return k
	}
	start := n
	if k := digits(); k == 0 || k > 1 && b[start] == '0' {
		return 0, false
	}
	integer = true
	if n < len(b) && b[n] == '.' {
		n++
		if digits() == 0 {
			return 0, false
		}
		integer = false
	}
	if n < len(b) && (b[n] == 'e' || b[n] == 'E') {
		n++
		if n < len(b) && (b[n] == '+' || b[n] == '-') {
			n++
		}
		if digits() == 0 {
			return 0, false
		}
		integer = false
	}
	return n, integer
}

// int reads an integer that fits an int.
func (p *fastParser) int() (int, bool) {
	n, integer := p.num()
	if n == 0 || !integer {
		return 0, false
	}
	v, err := strconv.Atoi(string(p.b[:n]))
	p.b = p.b[n:]
	return v, err == nil
}

func (p *fastParser) intPtr() (*int, bool) {
	v, ok := p.int()
	return &v, ok
}

// ints reads an array of integers.
func (p *fastParser) ints() ([]int, bool) {
	if !p.lit("[") {
		return nil, false
	}
	xs := []int{}
	for i := 0; !p.lit("]"); i++ {
		if i > 0 && !p.lit(",") {
			return nil, false
		}
		v, ok := p.int()
		if !ok {
			return nil, false
		}
		xs = append(xs, v)
	}
	return xs, true
}

// float reads a number.
func (p *fastParser) float() (*float64, bool) {
	n, _ := p.num()
	if n == 0 {
		return nil, false
	}
	v, err := strconv.ParseFloat(string(p.b[:n]), 64)
	p.b = p.b[n:]
	return &v, err == nil
}

package external

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/policies"
)

// The answers Serve and the Python module write are read without
// encoding/json; what is not of their compact form is left to ParseReply.
func TestFastActions(t *testing.T) {
	served := []byte(`{"msg":"actions","actions":[`)
	for i, a := range []policies.Action{{Kind: policies.Place, Job: 2, GPUs: []int{0, 3}}, {Kind: policies.Defer, Job: 3, GPU: -1, Reason: "memory"},
		{Kind: policies.Stop, Job: 4, Reason: "failed alone: oom"}, {Kind: policies.Wake, At: 75500 * 1e6}} {
		if i > 0 {
			served = append(served, ',')
		}
		served = appendAction(served, &a)
	}
	served = append(served, "]}"...)
	for _, tc := range []struct {
		line string
		fast bool
	}{
		{string(served), true},
		{`{"msg":"actions","actions":[{"kind":"defer","job":3,"gpu":1,"reason":"utilization"},{"kind":"place","job":5,"gpus":[1]}]}`, true}, // Python's
		{`{"msg":"actions","actions":[]}`, true},
		{`{"msg":"actions","actions":[{"kind":"wake","at":-0.5e-3}]}`, true}, // not after now: read, refused by check later
		{`{"msg":"actions","actions":[{"kind":"wake","at":1.5e3}]}`, true},
		{`{"msg":"actions", "actions":[]}`, false},
		{`{"msg":"actions","actions":[{"kind":"place","job":1.0,"gpus":[0]}]}`, false},
		{`{"msg":"actions","actions":[{"kind":"stop","job":1,"reason":"caf\u00e9"}]}`, false},
		{`{"msg":"actions","actions":[{"kind":"stop","job":1,"job":2}]}`, false},
		{`{"msg":"actions","actions":[{"Kind":"stop","job":1}]}`, false},
		{`{"msg":"actions","actions":[{"kind":"stop","job":01}]}`, false},
		{`{"msg":"actions","actions":[{"kind":"place","job":1}]}`, false}, // no gpus: ParseReply's error
		{`{"msg":"actions","actions":[{"kind":"stop","job":99999999999999999999}]}`, false},
	} {
		got, ok := fastActions([]byte(tc.line), nil)
		require.Equal(t, tc.fast, ok, tc.line)
		if ok {
			sameAsParseReply(t, []byte(tc.line), got)
		}
	}
}

// sameAsParseReply requires ParseReply to read line to the actions acts.
func sameAsParseReply(t *testing.T, line []byte, acts []wireAction) {
	t.Helper()
	r, err := ParseReply(line)
	if err != nil {
		t.Fatalf("fastActions read %q, ParseReply refused it: %v", line, err)
	}
	if r.Msg != "actions" || len(r.Actions) != len(acts) {
		t.Fatalf("%q: fastActions read %d actions, ParseReply %q with %d", line, len(acts), r.Msg, len(r.Actions))
	}
	for i := range acts {
		if !reflect.DeepEqual(acts[i], r.Actions[i]) {
			t.Fatalf("%q: action %d: fastActions %+v, ParseReply %+v", line, i, acts[i], r.Actions[i])
		}
	}
}

// FuzzFastActions: whatever fastActions reads, ParseReply reads to the same
// actions.
func FuzzFastActions(f *testing.F) {
	for _, s := range []string{
		`{"msg":"actions","actions":[{"kind":"place","job":1,"gpus":[0,1]},{"kind":"wake","at":3.5}]}`,
		`{"msg":"actions","actions":[{"kind":"defer","job":1,"gpu":-1,"reason":"memory"},{"kind":"stop","job":2}]}`,
		`{"msg":"actions","actions":[{"kind":"stop","job":-0,"reason":""}]}`, `{"msg":"actions","actions":[]}`,
		`{"msg":"actions","actions":[{"kind":"wake","at":1E+2}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if acts, ok := fastActions(line, nil); ok {
			sameAsParseReply(t, line, acts)
		}
	})
}

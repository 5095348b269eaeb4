package csvhead

import (
	"encoding/csv"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReader(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		need     []string
		err      string
		rows     []string // a's cell and the line of each row
	}{
		{"by name, any order", "b,a\n1,2\n3,4\n", []string{"a"}, "", []string{"2@2", "4@3"}},
		{"trimmed, byte-order mark removed", "\ufeff a ,b\n x ,y\n", []string{"a", "b"}, "", []string{"x@2"}},
		{"a name given twice", "a,b, a\n1,2,3\n", []string{"a"}, `f.csv:1: header names column "a" twice (columns 1 and 3)`, nil},
		{"a needed column missing", "b\n1\n", []string{"a"}, `f.csv: header: missing column "a"`, nil},
		{"empty file", "", nil, "f.csv: the file is empty: want a CSV header line", nil},
		{"empty file, columns needed", "", []string{"a", "b"}, "f.csv: the file is empty: want a CSV header line with columns a,b", nil},
		{"a short row", "a,b\n1,2\n3\n", nil, "f.csv:3: wrong number of fields", []string{"1@2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewReader(csv.NewReader(strings.NewReader(tc.in)), "f.csv", tc.need...)
			var got []string
			for err == nil {
				var ok bool
				if ok, err = r.Next(); !ok {
					break
				}
				got = append(got, r.Get("a")+"@"+strconv.Itoa(r.Line))
			}
			if tc.err != "" {
				require.EqualError(t, err, tc.err)
			} else {
				require.NoError(t, err)
			}
			require.Equal(t, tc.rows, got)
		})
	}
}

func TestEach(t *testing.T) {
	stop := errors.New("stop")
	for _, tc := range []struct {
		name, in string
		stopAt   string // a's cell at which fn returns stop
		err      string
		rows     []string
	}{
		{"every row in order", "a\n1\n2\n3\n", "", "", []string{"1@2", "2@3", "3@4"}},
		{"fn's error stops it", "a\n1\n2\n3\n", "2", "stop", []string{"1@2", "2@3"}},
		{"a malformed row stops it", "a,b\n1,2\n3\n4,5\n", "", "f.csv:3: wrong number of fields", []string{"1@2"}},
		{"no rows", "a\n", "", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewReader(csv.NewReader(strings.NewReader(tc.in)), "f.csv", "a")
			require.NoError(t, err)
			var got []string
			err = r.Each(func() error {
				got = append(got, r.Get("a")+"@"+strconv.Itoa(r.Line))
				if r.Get("a") == tc.stopAt {
					return stop
				}
				return nil
			})
			if tc.err != "" {
				require.EqualError(t, err, tc.err)
			} else {
				require.NoError(t, err)
			}
			require.Equal(t, tc.rows, got)
		})
	}
}

func FuzzReader(f *testing.F) {
	f.Add("a,b\n1,2\n")
	f.Add("\ufeffa\n\"x\ny\"\n")
	f.Fuzz(func(t *testing.T, in string) {
		r, err := NewReader(csv.NewReader(strings.NewReader(in)), "f.csv", "a")
		if err != nil {
			return
		}
		for {
			ok, err := r.Next()
			if err != nil || !ok {
				return
			}
			_ = r.Get("a") + r.Get("missing")
		}
	})
}

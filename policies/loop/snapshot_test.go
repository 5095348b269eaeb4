package loop

import (
	"fmt"
	"math"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/policies"
)

// unsubmitted is true of a job that shows only its ID, and false once any
// other field of policies.Job or of its Profile is set, to any value not
// bit for bit zero (a negative zero too): adding a field to either type
// without checking it in unsubmitted fails here.
func TestUnsubmittedCoversJob(t *testing.T) {
	require.True(t, unsubmitted(&policies.Job{ID: 7}))
	set := func(f reflect.Value) []reflect.Value {
		switch f.Kind() {
		case reflect.Bool:
			return []reflect.Value{reflect.ValueOf(true)}
		case reflect.Int, reflect.Int64:
			return []reflect.Value{reflect.ValueOf(int64(1)).Convert(f.Type())}
		case reflect.Uint8:
			return []reflect.Value{reflect.ValueOf(uint8(1)).Convert(f.Type())}
		case reflect.Float64:
			return []reflect.Value{reflect.ValueOf(1.0), reflect.ValueOf(math.Copysign(0, -1))}
		case reflect.String:
			return []reflect.Value{reflect.ValueOf("x").Convert(f.Type())}
		case reflect.Slice:
			return []reflect.Value{reflect.MakeSlice(f.Type(), 0, 0)}
		}
		t.Fatalf("field of kind %s: teach this test (and unsubmitted) about it", f.Kind())
		return nil
	}
	fields := 0
	for _, path := range fieldPaths(reflect.TypeOf(policies.Job{}), nil) {
		if reflect.TypeOf(policies.Job{}).FieldByIndex(path).Name == "ID" {
			continue
		}
		var j policies.Job
		for _, x := range set(reflect.ValueOf(&j).Elem().FieldByIndex(path)) {
			j = policies.Job{ID: 7}
			reflect.ValueOf(&j).Elem().FieldByIndex(path).Set(x)
			require.False(t, unsubmitted(&j), "field %v set to %v", reflect.TypeOf(j).FieldByIndex(path).Name, x)
		}
		fields++
	}
	require.Greater(t, fields, 20)
}

// fieldPaths lists the index paths of t's fields, descending into embedded
// structs.
func fieldPaths(t reflect.Type, prefix []int) [][]int {
	var out [][]int
	for i := range t.NumField() {
		path := append(append([]int(nil), prefix...), i)
		if f := t.Field(i); f.Anonymous && f.Type.Kind() == reflect.Struct {
			out = append(out, fieldPaths(f.Type, path)...)
			continue
		}
		out = append(out, path)
	}
	return out
}

// Update copies every job, whether it is new (submitted or not, listed
// one at a time or many at once) or changed, and the copy owns its GPU
// lists.
func TestSnapshotCopiesJobs(t *testing.T) {
	src := &policies.View{GPUs: []policies.GPU{{Index: 0, CapacityMiB: 100}}}
	var s Snapshot
	add := func(j policies.Job) {
		j.ID = policies.JobID(len(src.Jobs))
		src.Jobs = append(src.Jobs, j)
	}
	for i := range 40 {
		switch i % 4 {
		case 0:
			add(policies.Job{})
		case 1:
			add(policies.Job{Name: "a", GPUs: 1, State: policies.Pending, Profile: policies.Profile{Workload: "w", SoloS: 3}})
		case 2:
			add(policies.Job{GPUs: 1, State: policies.Running, On: []int{0}})
		case 3:
			add(policies.Job{Profile: policies.Profile{PeakMiB: math.Copysign(0, -1)}})
		}
		if i < 10 || i%7 == 0 { // one at a time, then several at once
			require.Equal(t, src.Jobs, s.Update(src).Jobs, "after job %d", i)
		}
	}
	v := s.Update(src)
	require.Equal(t, src.Jobs, v.Jobs)
	require.True(t, math.Signbit(v.Jobs[3].PeakMiB))
	require.Nil(t, v.Jobs[0].On)
	v.Jobs[2].On[0] = 9
	require.Equal(t, []int{0}, src.Jobs[2].On, "the snapshot's GPU lists are its own")
	src.Jobs[4].State = policies.Pending
	s.Touch(policies.Event{Kind: policies.JobArrived, Job: 4})
	require.Equal(t, src.Jobs[4], s.Update(src).Jobs[4])
}

// The loop's snapshot lists the jobs events and actions touch only where
// someone reads them: a snapshot of copied jobs (Update copies them
// again) or of a backend that does not check itself (check cross-checks
// them). Sharing the jobs of a self-checking backend, it lists none, and
// the policy still sees every change.
func TestSnapshotListsTouchedJobsOnlyWhereRead(t *testing.T) {
	for _, c := range []struct {
		shared, selfChecked, lists bool
	}{
		{false, false, true},
		{false, true, true},
		{true, false, true},
		{true, true, false},
	} {
		t.Run(fmt.Sprintf("shared=%v/selfChecked=%v", c.shared, c.selfChecked), func(t *testing.T) {
			src := &policies.View{GPUs: []policies.GPU{{Index: 0, CapacityMiB: 100}},
				Jobs: []policies.Job{{ID: 0, GPUs: 1, State: policies.Pending}, {ID: 1, GPUs: 1, State: policies.Pending}}}
			s := newSnapshot(c.shared, c.selfChecked)
			s.Update(src)
			src.Jobs[1].State, src.Jobs[1].On = policies.Running, []int{0}
			src.GPUs[0].Jobs = []policies.JobID{1}
			s.touch(policies.JobStarted, 1)
			s.TouchAction(policies.Action{Kind: policies.Stop, Job: 0})
			if c.lists {
				require.Equal(t, []policies.JobID{1, 0}, s.dirty)
			} else {
				require.Empty(t, s.dirty)
			}
			require.Equal(t, src.Jobs, s.Update(src).Jobs)
			require.Empty(t, s.dirty)
		})
	}
}

// copyGPU copies a GPU field by field: every field of policies.GPU, set
// to a value of its own, is copied (a field added to GPU and not to
// copyGPU fails here), and the copy keeps its own job list.
func TestCopyGPUCopiesEveryField(t *testing.T) {
	typ := reflect.TypeOf(policies.GPU{})
	for i := range typ.NumField() {
		var src policies.GPU
		f := reflect.ValueOf(&src).Elem().Field(i)
		switch f.Kind() {
		case reflect.Int:
			f.SetInt(7)
		case reflect.Float64:
			f.SetFloat(math.Copysign(0, -1))
		case reflect.Slice:
			f.Set(reflect.ValueOf([]policies.JobID{3, 4}))
		default:
			t.Fatalf("field %s of kind %s: teach this test (and copyGPU) about it", typ.Field(i).Name, f.Kind())
		}
		for _, own := range [][]policies.JobID{nil, make([]policies.JobID, 0, 4)} {
			dst := policies.GPU{Jobs: own}
			copyGPU(&dst, &src)
			got := dst
			if len(got.Jobs) == 0 {
				got.Jobs = nil // empty: nil or not, as the copy's own list has it
			}
			require.Equal(t, src, got, "field %s", typ.Field(i).Name)
			require.Equal(t, math.Signbit(src.UsedMiB), math.Signbit(dst.UsedMiB))
			require.Equal(t, math.Signbit(src.CapacityMiB), math.Signbit(dst.CapacityMiB))
			if len(src.Jobs) > 0 {
				require.NotSame(t, &src.Jobs[0], &dst.Jobs[0], "the copy's job list is its own")
			}
		}
	}
}

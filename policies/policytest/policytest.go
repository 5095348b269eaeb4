// Package policytest holds checks that tests of policies share: it is
// imported by tests only.
package policytest

import (
	"fmt"
	"reflect"
	"slices"

	"github.com/aegis-sched/aegis/policies"
)

// WriteCheck finds the decisions that wrote into their view's jobs or
// their GPU lists (what a policies.JobsReader promises never to do): call
// Before ahead of a decision and After once it returned.
type WriteCheck struct {
	before []policies.Job
	on     [][]int
	// Wrote names the first three writes found ("t=…: job N").
	Wrote []string
}

// Before copies v's jobs and their GPU lists.
func (c *WriteCheck) Before(v *policies.View) {
	c.before = append(c.before[:0], v.Jobs...)
	c.on = c.on[:0]
	for i := range v.Jobs {
		c.on = append(c.on, slices.Clone(v.Jobs[i].On))
	}
}

// After compares v's jobs with the copies Before made and notes a job
// that differs.
func (c *WriteCheck) After(v *policies.View) {
	for i := range v.Jobs {
		j := c.before[i]
		j.On = c.on[i]
		if !reflect.DeepEqual(j, v.Jobs[i]) && len(c.Wrote) < 3 {
			c.Wrote = append(c.Wrote, fmt.Sprintf("t=%v: job %d", v.Now, j.ID))
		}
	}
}

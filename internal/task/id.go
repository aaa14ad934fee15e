// Package task names the parallel instances of a job's operators: one
// identity used by the plan, the supervision and checkpoint state machines,
// placement and the actors.
package task

import "fmt"

// ID names one parallel instance of an operator: the operator's name, its
// index in the plan, and the instance number.
type ID struct {
	Operator   string
	OperatorID int
	Instance   int
}

// String renders the task as operator[instance].
func (t ID) String() string { return fmt.Sprintf("%s[%d]", t.Operator, t.Instance) }

// Less orders tasks by operator index, then instance.
func (t ID) Less(u ID) bool {
	if t.OperatorID != u.OperatorID {
		return t.OperatorID < u.OperatorID
	}
	return t.Instance < u.Instance
}

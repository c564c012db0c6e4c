package client

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/contract"
)

// fill sets every field of v, recursively, to something not zero, so that a
// field one side lacks shows in its JSON.
func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem())
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			v.Set(reflect.ValueOf(time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i))
			}
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0))
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(7)
	case reflect.Float64:
		v.SetFloat(0.5)
	}
}

// The public report types are the AM's status JSON's Go form: every key of
// contract.StatusReport, nested ones included, survives the conversion.
func TestPublicReportKeepsEveryField(t *testing.T) {
	var rep contract.StatusReport
	fill(reflect.ValueOf(&rep).Elem())
	want, err := json.Marshal(rep)
	require.NoError(t, err)
	got, err := json.Marshal(publicReport(&rep))
	require.NoError(t, err)
	require.JSONEq(t, string(want), string(got))
	require.Equal(t, reflect.TypeOf(rep).NumField(), reflect.TypeOf(JobReport{}).NumField())
	require.Equal(t, reflect.TypeOf(contract.TaskReport{}).NumField(), reflect.TypeOf(TaskResult{}).NumField())
	require.Equal(t, reflect.TypeOf(contract.JobProgress{}).NumField(), reflect.TypeOf(JobProgress{}).NumField())
	require.Equal(t, reflect.TypeOf(contract.JobInfo{}).NumField(), reflect.TypeOf(JobInfo{}).NumField())
}

package client

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/submit"
)

// fill sets every exported field of v, recursively, to something not zero.
func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem())
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i))
			}
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0))
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k)
		fill(e)
		v.SetMapIndex(k, e)
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int32, reflect.Int64:
		if v.Type() == reflect.TypeOf(time.Duration(0)) {
			v.SetInt(int64(time.Second))
			return
		}
		v.SetInt(7)
	case reflect.Float64:
		v.SetFloat(0.5)
	}
}

// Every field of Job reaches the submission engine, under the same name
// and with the same value.
func TestEngineJobCarriesEveryField(t *testing.T) {
	var job Job
	fill(reflect.ValueOf(&job).Elem())
	ej := reflect.ValueOf(job.engineJob(nil, "alice"))
	jt := reflect.TypeOf(job)
	for i := range jt.NumField() {
		name := jt.Field(i).Name
		got := ej.FieldByName(name)
		require.True(t, got.IsValid(), "submit.Job lacks %s", name)
		want, err := json.Marshal(reflect.ValueOf(job).Field(i).Interface())
		require.NoError(t, err)
		have, err := json.Marshal(got.Interface())
		require.NoError(t, err)
		require.JSONEq(t, string(want), string(have), name)
	}
	require.Equal(t, jt.NumField()+2, reflect.TypeOf(submit.Job{}).NumField(), "submit.Job is Job plus Conf and User")
}

package recordcodec

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"

	"github.com/vmihailenco/msgpack/v5"
)

// agreesWithLibrary encodes and decodes sample batches with c and with the
// library and reports the first difference: AppendBatch must write what
// marshalCompact writes, and DecodeBatch must decode that and what
// msgpack.Marshal writes (default options) as msgpack.Unmarshal does. It
// runs once per type, in For.
func agreesWithLibrary[T any](c *Codec[T]) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("self-check panicked: %v", r)
		}
	}()
	var sample T
	fillSample(reflect.ValueOf(&sample).Elem())
	for _, batch := range [][]T{nil, {}, {*new(T), sample}} {
		want, err := marshalCompact(batch)
		if err != nil {
			return fmt.Errorf("self-check: library encode: %w", err)
		}
		got, err := c.AppendBatch(nil, batch)
		if err != nil {
			return fmt.Errorf("self-check: encode: %w", err)
		}
		if !bytes.Equal(got, want) {
			return fmt.Errorf("self-check: encoded % x, the library % x", got, want)
		}
		fixed, err := msgpack.Marshal(batch)
		if err != nil {
			return fmt.Errorf("self-check: library encode: %w", err)
		}
		for _, data := range [][]byte{want, fixed} {
			var libOut []T
			if err := msgpack.Unmarshal(data, &libOut); err != nil {
				return fmt.Errorf("self-check: library decode: %w", err)
			}
			out, err := c.DecodeBatch(data)
			if err != nil {
				return fmt.Errorf("self-check: decode: %w", err)
			}
			if !reflect.DeepEqual(out, libOut) {
				return errors.New("self-check: decoded values differ from the library's")
			}
		}
	}
	return nil
}

// marshalCompact is what the library writes for v with
// Encoder.UseCompactInts(true), the encoding AppendBatch reproduces.
func marshalCompact(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.UseCompactInts(true)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// fillSample sets every settable scalar in v to a value other than zero.
func fillSample(v reflect.Value) {
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(-100)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(200)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1.5)
	case reflect.String:
		v.SetString("sample")
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			v.Set(reflect.MakeSlice(v.Type(), 2, 2))
			v.Index(0).SetUint(1)
			v.Index(1).SetUint(2)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				fillSample(f)
			}
		}
	}
}

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/cointoolkit/coin/lib/rpcapi"
)

// countError is a wrong number of arguments: a usage error (exit status 2).
type countError struct{ error }

// convertArgs checks the argument count against m's parameters and converts each argument
// by its parameter's type (bitcoin-cli's vRPCConvertParams). Omitted optional parameters
// are not sent.
func convertArgs(m rpcapi.Method, args []string) ([]json.RawMessage, error) {
	lo, hi := m.RequiredParams(), len(m.Params)
	if len(args) < lo || len(args) > hi {
		which := "too many"
		if len(args) < lo {
			which = "too few"
		}
		return nil, countError{fmt.Errorf("%s arguments for %s: got %d, want %s\nusage: %s\n(see '%s %s --help')",
			which, m.Name, len(args), wantCount(lo, hi), usageLine(m.Name, argsUsage(m)), appName, m.Name)}
	}
	out := make([]json.RawMessage, len(args))
	for i, a := range args {
		v, err := convertArg(m.Params[i], a)
		if err != nil {
			return nil, fmt.Errorf("%s: argument %d (%s): %w", m.Name, i+1, m.Params[i].Name, err)
		}
		out[i] = v
	}
	return out, nil
}

func wantCount(lo, hi int) string {
	switch {
	case hi == 0:
		return "none"
	case lo == hi:
		return strconv.Itoa(lo)
	}
	return fmt.Sprintf("%d to %d", lo, hi)
}

// convertArg turns one command-line argument into the JSON value of parameter p: integers
// become JSON numbers, booleans true or false, every other type a JSON string.
func convertArg(p rpcapi.Param, arg string) (json.RawMessage, error) {
	switch p.Type {
	case rpcapi.TypeUint:
		n, err := strconv.ParseUint(arg, 10, 64)
		if err != nil {
			if errors.Is(err, strconv.ErrRange) {
				return nil, fmt.Errorf("%q is out of range (at most %d)", arg, uint64(1<<64-1))
			}
			return nil, fmt.Errorf("%q is not a non-negative integer", arg)
		}
		return json.RawMessage(strconv.FormatUint(n, 10)), nil
	case rpcapi.TypeBool:
		switch strings.ToLower(arg) {
		case "true", "1":
			return json.RawMessage("true"), nil
		case "false", "0":
			return json.RawMessage("false"), nil
		}
		return nil, fmt.Errorf("%q is not a boolean (use true, false, 1 or 0)", arg)
	}
	b, err := json.Marshal(arg)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// genericArg is a parameter of "call": the argument itself when it is valid JSON, else the
// argument as a JSON string.
func genericArg(arg string) json.RawMessage {
	if strings.TrimSpace(arg) != "" && json.Valid([]byte(arg)) {
		return json.RawMessage(arg)
	}
	b, _ := json.Marshal(arg) // a string always marshals
	return b
}

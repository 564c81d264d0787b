package rpcserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/keys"
	"github.com/cointoolkit/coin/lib/reason"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
)

func (a *api) validateAddress(_ context.Context, p jsonrpc.Params) (any, error) {
	s, err := p.String(0)
	if err != nil {
		return nil, err
	}
	pkh, err := keys.DecodeAddress(s, a.b.Network().HRP)
	if err != nil {
		return rpcapi.ValidateAddress{IsValid: false, Address: s, Error: err.Error()}, nil
	}
	cid, err := a.clusterOf(types.Hash(pkh))
	if err != nil {
		return nil, internal(err)
	}
	return rpcapi.ValidateAddress{IsValid: true, Address: strings.ToLower(s), PubKeyHash: types.Hash(pkh).String(),
		ClusterID: cid.String()}, nil
}

func (a *api) stop(context.Context, jsonrpc.Params) (any, error) {
	a.b.RequestStop()
	return "coin-node stopping", nil
}

// help lists the methods by category, or describes one.
func help(p jsonrpc.Params) (any, error) {
	name, err := p.OptString(0, "")
	if err != nil {
		return nil, err
	}
	var sb strings.Builder
	if name == "" {
		// Each category once, in the order of its first method in the catalogue.
		var cats []string
		byCat := map[string][]rpcapi.Method{}
		for _, m := range rpcapi.Methods {
			if _, ok := byCat[m.Category]; !ok {
				cats = append(cats, m.Category)
			}
			byCat[m.Category] = append(byCat[m.Category], m)
		}
		for i, cat := range cats {
			if i > 0 {
				sb.WriteString("\n")
			}
			fmt.Fprintf(&sb, "== %s ==\n", cat)
			for _, m := range byCat[cat] {
				sb.WriteString(usage(m) + "\n")
			}
		}
		return strings.TrimRight(sb.String(), "\n"), nil
	}
	m, ok := rpcapi.Lookup(name)
	if !ok {
		return nil, rpcapi.DomainError(reason.UnknownCommand, "help: unknown command: "+name)
	}
	fmt.Fprintf(&sb, "%s\n\n%s\n", usage(m), m.Summary)
	if len(m.Params) > 0 {
		sb.WriteString("\nArguments:\n")
		for i, p := range m.Params {
			opt := "required"
			if p.Optional {
				opt = "optional"
			}
			fmt.Fprintf(&sb, "%d. %s (%s, %s) %s\n", i+1, p.Name, p.Type, opt, p.Help)
		}
	}
	fmt.Fprintf(&sb, "\nResult: %s", m.Result)
	return sb.String(), nil
}

func usage(m rpcapi.Method) string {
	parts := []string{m.Name}
	for _, p := range m.Params {
		if p.Optional {
			parts = append(parts, "( "+p.Name+" )")
		} else {
			parts = append(parts, `"`+p.Name+`"`)
		}
	}
	return strings.Join(parts, " ")
}

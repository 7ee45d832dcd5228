// Command template renders the payguard chart like `helm template`, through Helm's libraries (for machines
// without the helm binary; ci/check.sh uses it):
//
//	go run ./cmd/template [--kube-version v1.31.4] [--name t] [--set k=v]... CHART
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/payguard/payguard/charts/payguard/ci/render"
)

type sets []string

func (s *sets) String() string     { return strings.Join(*s, ",") }
func (s *sets) Set(v string) error { *s = append(*s, v); return nil }

func main() {
	kube := flag.String("kube-version", "v1.31.4", "the cluster's Kubernetes version (.Capabilities.KubeVersion)")
	name := flag.String("name", "t", "release name")
	namespace := flag.String("namespace", "default", "release namespace")
	var vals sets
	flag.Var(&vals, "set", "a value, as helm --set (repeatable)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: template [flags] CHART")
		os.Exit(2)
	}
	out, err := render.Template(flag.Arg(0), *name, *namespace, *kube, vals)
	if err != nil {
		fmt.Fprintln(os.Stderr, "template:", err)
		os.Exit(1)
	}
	fmt.Print(out)
}

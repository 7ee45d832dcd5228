// Command genschema writes charts/payguard/values.schema.json from payguard's configuration types (see
// internal/chartschema). Run it from the repository root after changing a config type or the chart's values:
//
//	go run ./internal/cmd/genschema
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/payguard/payguard/internal/chartschema"
)

func main() {
	root := flag.String("root", ".", "the repository root")
	flag.Parse()
	if err := chartschema.Write(*root); err != nil {
		fmt.Fprintln(os.Stderr, "genschema:", err)
		os.Exit(1)
	}
	fmt.Println("wrote", chartschema.SchemaPath)
}

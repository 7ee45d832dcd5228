package render

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/strvals"
)

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// Template is `helm template NAME CHART --kube-version KUBE --set ...` through Helm's own libraries: the
// kubeVersion constraint, the values schema, then the engine (no cluster: lookup finds nothing). It returns
// the manifests in file order, separated by "---".
func Template(chartPath, name, namespace, kube string, sets []string) (string, error) {
	c, err := loader.Load(chartPath)
	if err != nil {
		return "", err
	}
	kv, err := chartutil.ParseKubeVersion(kube)
	if err != nil {
		return "", err
	}
	if c.Metadata.KubeVersion != "" && !chartutil.IsCompatibleRange(c.Metadata.KubeVersion, kv.String()) {
		return "", fmt.Errorf("chart requires kubeVersion %s, cluster is %s", c.Metadata.KubeVersion, kv)
	}
	caps := chartutil.DefaultCapabilities.Copy()
	caps.KubeVersion = *kv
	vals := map[string]any{}
	for _, s := range sets {
		if err := strvals.ParseInto(s, vals); err != nil {
			return "", fmt.Errorf("--set %s: %w", s, err)
		}
	}
	if err := chartutil.ProcessDependenciesWithMerge(c, vals); err != nil {
		return "", err
	}
	top, err := chartutil.ToRenderValues(c, vals, chartutil.ReleaseOptions{Name: name, Namespace: namespace, IsInstall: true}, caps)
	if err != nil {
		return "", err
	}
	out, err := engine.Render(c, top)
	if err != nil {
		return "", err
	}
	var files []string
	for f := range out {
		if strings.HasSuffix(f, ".yaml") && strings.TrimSpace(out[f]) != "" {
			files = append(files, f)
		}
	}
	sort.Strings(files)
	var b strings.Builder
	for _, f := range files {
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", f, strings.TrimSpace(out[f]))
	}
	return b.String(), nil
}

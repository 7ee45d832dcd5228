// Package render checks the payguard chart the way Helm and the Kubernetes API server will meet it, with no
// cluster and no network: Helm's own engine renders every documented values combination for Kubernetes 1.27
// and 1.31 (with the chart's values.schema.json applied exactly as `helm install` applies it), every object
// is decoded strictly into the k8s.io/api types of that version (v0.31 here, v0.27 in ../kube127: one go.mod
// holds one version), and invariants are checked over the result. It is its own module so that Helm and
// the Kubernetes libraries stay out of payguard's go.mod. Run by ../check.sh.
package render

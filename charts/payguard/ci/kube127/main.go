// Command kube127 decodes rendered Kubernetes objects strictly (an unknown field is an error) into the
// k8s.io/api types of Kubernetes 1.27, the oldest version the chart supports. It is its own module because one
// go.mod holds one k8s.io/api version; the render module (../render) checks 1.31 in process and runs this for
// 1.27:
//
//	go run . DIR...   # every *.yaml file under each DIR, one object per file
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"
)

func newObject(apiVersion, kind string) any {
	switch apiVersion + "/" + kind {
	case "v1/ConfigMap":
		return &corev1.ConfigMap{}
	case "v1/Secret":
		return &corev1.Secret{}
	case "v1/Service":
		return &corev1.Service{}
	case "v1/PersistentVolumeClaim":
		return &corev1.PersistentVolumeClaim{}
	case "apps/v1/Deployment":
		return &appsv1.Deployment{}
	case "networking.k8s.io/v1/NetworkPolicy":
		return &networkingv1.NetworkPolicy{}
	case "policy/v1/PodDisruptionBudget":
		return &policyv1.PodDisruptionBudget{}
	}
	return nil
}

func main() {
	failed := 0
	checked := 0
	for _, dir := range os.Args[1:] {
		files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(2)
			}
			var head struct{ APIVersion, Kind string }
			if err := yaml.Unmarshal(data, &head); err != nil {
				fmt.Printf("FAIL %s: %v\n", f, err)
				failed++
				continue
			}
			obj := newObject(head.APIVersion, head.Kind)
			if obj == nil {
				if strings.HasPrefix(head.APIVersion, "monitoring.coreos.com/") {
					continue // a CRD, not part of k8s.io/api
				}
				fmt.Printf("FAIL %s: %s %s is not a Kubernetes 1.27 type\n", f, head.APIVersion, head.Kind)
				failed++
				continue
			}
			if err := yaml.UnmarshalStrict(data, obj); err != nil {
				fmt.Printf("FAIL %s: %s: %v\n", f, head.Kind, err)
				failed++
				continue
			}
			checked++
		}
	}
	fmt.Printf("kube 1.27: %d objects decoded strictly, %d failed\n", checked, failed)
	if failed > 0 || checked == 0 {
		os.Exit(1)
	}
}

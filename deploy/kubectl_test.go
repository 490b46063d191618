package deploy

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Offline validation with kubectl alone. `kubectl apply --dry-run=client`
// needs a server (it fetches the OpenAPI schema and the API groups), so:
//   - `kubectl label --local -o json` reads any YAML document into JSON
//     (syntax, apiVersion and kind present), without its schema;
//   - `kubectl set env --local -o json` decodes an object that has a pod
//     template into kubectl's compiled-in Go types: a wrong type, a bad
//     quantity or an unknown kind fails there; an unknown or misspelled
//     field is dropped silently, so every field of the document must come
//     back out of it (subset below);
//   - a PVC is checked as the volumeClaimTemplate of an ephemeral volume
//     in a pod, which has the same type as its spec.
//
// Kubernetes' kubectl and Debian's kubernetes-client (1.20) behave alike
// here.

// kubectl runs kubectl on stdin's document and returns its JSON output.
func kubectl(doc []byte, args ...string) (map[string]any, error) {
	cmd := exec.Command("kubectl", append(args, "-o", "json", "-f", "-")...)
	cmd.Stdin = strings.NewReader(string(doc))
	cmd.Env = append(os.Environ(), "KUBECONFIG=/dev/null") // never a cluster
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return nil, fmt.Errorf("kubectl %s: %s", strings.Join(args, " "), strings.TrimSpace(string(ee.Stderr)))
		}
		return nil, err
	}
	var obj map[string]any
	if err := json.Unmarshal(out, &obj); err != nil {
		return nil, fmt.Errorf("kubectl %s: %v", strings.Join(args, " "), err)
	}
	return obj, nil
}

// asJSON reads one YAML document as kubectl does.
func asJSON(doc []byte) (map[string]any, error) {
	obj, err := kubectl(doc, "label", "--local", "ringcp-validate=yes")
	if err != nil {
		return nil, err
	}
	if labels, ok := dig(obj, "metadata", "labels").(map[string]any); ok {
		delete(labels, "ringcp-validate")
		if len(labels) == 0 {
			delete(obj["metadata"].(map[string]any), "labels")
		}
	}
	return obj, nil
}

// typed decodes obj (which has a pod template) into kubectl's Go types
// and back, with one more environment variable, and checks that nothing
// of obj was lost on the way.
func typed(obj map[string]any) (map[string]any, error) {
	doc, _ := json.Marshal(obj)
	back, err := kubectl(doc, "set", "env", "--local", "RINGCP_VALIDATE=1")
	if err != nil {
		return nil, err
	}
	if err := subset(obj, back, ""); err != nil {
		return nil, fmt.Errorf("%s %s: %v (a field its type does not have?)", obj["kind"], dig(obj, "metadata", "name"), err)
	}
	return back, nil
}

// subset: every field of a is in b with the same value; a list of b may
// be longer (set env appends).
func subset(a, b any, path string) error {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			return fmt.Errorf("%s is not an object after decoding", path)
		}
		for k, v := range av {
			w, ok := bv[k]
			if !ok {
				return fmt.Errorf("%s.%s is lost when decoded", path, k)
			}
			if err := subset(v, w, path+"."+k); err != nil {
				return err
			}
		}
	case []any:
		bv, ok := b.([]any)
		if !ok || len(bv) < len(av) {
			return fmt.Errorf("%s is not the same list after decoding", path)
		}
		for i := range av {
			if err := subset(av[i], bv[i], fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	default:
		if !reflect.DeepEqual(a, b) {
			return fmt.Errorf("%s is %v, decoded as %v", path, a, b)
		}
	}
	return nil
}

// pvcAsPod checks a PVC's spec as an ephemeral volume's claim template.
func pvcAsPod(pvc map[string]any) error {
	for k := range pvc {
		if k != "apiVersion" && k != "kind" && k != "metadata" && k != "spec" {
			return fmt.Errorf("PersistentVolumeClaim has a field %s", k)
		}
	}
	pod := map[string]any{
		"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "pvc-check"},
		"spec": map[string]any{
			"containers": []any{map[string]any{"name": "c", "image": "x"}},
			"volumes": []any{map[string]any{"name": "v", "ephemeral": map[string]any{
				"volumeClaimTemplate": map[string]any{"spec": pvc["spec"]}}}},
		},
	}
	_, err := typed(pod)
	return err
}

// documents splits a YAML file at its "---" lines.
func documents(raw []byte) [][]byte {
	var docs [][]byte
	for _, d := range strings.Split("\n"+string(raw), "\n---") {
		if strings.TrimSpace(stripComments(d)) != "" {
			docs = append(docs, []byte(d))
		}
	}
	return docs
}

func stripComments(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// dig follows keys through nested objects; nil when one is missing.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func needKubectl(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("needs kubectl (Debian's kubernetes-client)")
	}
}

func manifests(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("kubernetes/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in deploy/kubernetes: %v", err)
	}
	return files
}

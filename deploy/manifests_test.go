package deploy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

// validate checks one YAML document: kubectl's decoding (kubectl_test.go)
// and what ringcp's manifests promise (no privilege, a read-only root,
// every capability dropped, requests and limits, block claims as
// volumeDevices).
func validate(doc []byte) error {
	obj, err := asJSON(doc)
	if err != nil {
		return err
	}
	switch fmt.Sprint(obj["apiVersion"], " ", obj["kind"]) {
	case "v1 PersistentVolumeClaim":
		return pvcAsPod(obj)
	case "batch/v1 Job":
		back, err := typed(obj)
		if err != nil {
			return err
		}
		return podPolicy(dig(back, "spec", "template", "spec").(map[string]any))
	case "cdi.kubevirt.io/v1beta1 CDI":
		return cdiImporterPatch(obj)
	}
	return fmt.Errorf("%s %s: not a kind these manifests use", obj["apiVersion"], obj["kind"])
}

// podPolicy is what every pod of ours keeps to.
func podPolicy(spec map[string]any) error {
	for _, host := range []string{"hostNetwork", "hostPID", "hostIPC"} {
		if spec[host] == true {
			return fmt.Errorf("pod has %s", host)
		}
	}
	claims := map[string]bool{}
	for _, v := range spec["volumes"].([]any) {
		vol := v.(map[string]any)
		if vol["hostPath"] != nil {
			return fmt.Errorf("volume %s is a hostPath", vol["name"])
		}
		if vol["persistentVolumeClaim"] != nil {
			claims[vol["name"].(string)] = true
		}
	}
	podNonRoot := dig(spec, "securityContext", "runAsNonRoot") == true
	containers, _ := spec["containers"].([]any)
	inits, _ := spec["initContainers"].([]any)
	for _, c := range append(containers, inits...) {
		if err := containerPolicy(c.(map[string]any), podNonRoot, claims); err != nil {
			return err
		}
	}
	return nil
}

func containerPolicy(c map[string]any, podNonRoot bool, claims map[string]bool) error {
	name := c["name"]
	sc, _ := c["securityContext"].(map[string]any)
	switch {
	case sc == nil:
		return fmt.Errorf("container %s has no securityContext", name)
	case sc["privileged"] == true:
		return fmt.Errorf("container %s is privileged", name)
	case sc["allowPrivilegeEscalation"] != false:
		return fmt.Errorf("container %s allows privilege escalation", name)
	case sc["readOnlyRootFilesystem"] != true:
		return fmt.Errorf("container %s has a writable root", name)
	case sc["runAsNonRoot"] == false || sc["runAsNonRoot"] == nil && !podNonRoot: // the container's own overrides the pod's
		return fmt.Errorf("container %s may run as root", name)
	case dig(sc, "capabilities", "add") != nil:
		return fmt.Errorf("container %s adds capabilities", name)
	}
	if drop, _ := dig(sc, "capabilities", "drop").([]any); len(drop) != 1 || drop[0] != "ALL" {
		return fmt.Errorf("container %s does not drop ALL capabilities", name)
	}
	for _, r := range []string{"requests.cpu", "requests.memory", "limits.memory"} {
		kind, res, _ := strings.Cut(r, ".")
		if dig(c, "resources", kind, res) == nil {
			return fmt.Errorf("container %s has no resources.%s", name, r)
		}
	}
	// A claim is a device (volumeDevices) or a mount, never both here.
	devices, _ := c["volumeDevices"].([]any)
	for _, d := range devices {
		if !claims[d.(map[string]any)["name"].(string)] {
			return fmt.Errorf("container %s: device %s is not a claim", name, d.(map[string]any)["name"])
		}
	}
	return nil
}

// cdiImporterPatch checks the CDI resource's patch: CDI's fields only
// (decoded strictly), and a strategic merge patch that, applied by
// kubectl to a Deployment shaped like the operator's cdi-deployment, sets
// IMPORTER_IMAGE and keeps the other variables.
func cdiImporterPatch(obj map[string]any) error {
	raw, _ := json.Marshal(obj)
	var cr struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Spec struct {
			CustomizeComponents struct {
				Patches []struct {
					ResourceName string `json:"resourceName"`
					ResourceType string `json:"resourceType"`
					Patch        string `json:"patch"`
					Type         string `json:"type"`
				} `json:"patches"`
			} `json:"customizeComponents"`
		} `json:"spec"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cr); err != nil {
		return fmt.Errorf("CDI: %v", err)
	}
	patches := cr.Spec.CustomizeComponents.Patches
	if cr.Metadata.Name != "cdi" || len(patches) != 1 {
		return errors.New("CDI: want the resource cdi with one patch")
	}
	p := patches[0]
	if p.ResourceType != "Deployment" || p.ResourceName != "cdi-deployment" || p.Type != "strategic" {
		return fmt.Errorf("CDI: the patch is for %s %s (%s), not Deployment cdi-deployment (strategic)", p.ResourceType, p.ResourceName, p.Type)
	}
	deployment := []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"cdi-deployment","namespace":"cdi"},
		"spec":{"selector":{"matchLabels":{"cdi.kubevirt.io":"cdi-deployment"}},"template":{"metadata":{"labels":{"cdi.kubevirt.io":"cdi-deployment"}},
		"spec":{"containers":[{"name":"cdi-deployment","image":"quay.io/kubevirt/cdi-controller:v1.62.0",
		"env":[{"name":"IMPORTER_IMAGE","value":"quay.io/kubevirt/cdi-importer:v1.62.0"},{"name":"CLONER_IMAGE","value":"quay.io/kubevirt/cdi-cloner:v1.62.0"}]}]}}}}`)
	patched, err := kubectl(deployment, "patch", "--local", "--type", "strategic", "-p", p.Patch)
	if err != nil {
		return err
	}
	env := map[string]any{}
	containers, _ := dig(patched, "spec", "template", "spec", "containers").([]any)
	if len(containers) != 1 {
		return fmt.Errorf("CDI: the patch leaves %d containers in cdi-deployment", len(containers))
	}
	for _, e := range containers[0].(map[string]any)["env"].([]any) {
		env[e.(map[string]any)["name"].(string)] = e.(map[string]any)["value"]
	}
	if img, _ := env["IMPORTER_IMAGE"].(string); !strings.Contains(img, "ringcp") || env["CLONER_IMAGE"] == nil {
		return fmt.Errorf("CDI: the patched cdi-deployment has IMPORTER_IMAGE %v and CLONER_IMAGE %v", env["IMPORTER_IMAGE"], env["CLONER_IMAGE"])
	}
	return nil
}

func TestManifests(t *testing.T) {
	needKubectl(t)
	for _, file := range manifests(t) {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range documents(raw) {
			if err := validate(doc); err != nil {
				t.Errorf("%s, document %d: %v", file, i+1, err)
			}
		}
	}
}

// TestManifestsBroken: the validation fails on each way a manifest can be
// wrong, so that TestManifests can.
func TestManifestsBroken(t *testing.T) {
	needKubectl(t)
	job, err := os.ReadFile("kubernetes/job-pvc-to-pvc.yaml")
	if err != nil {
		t.Fatal(err)
	}
	pvc, err := os.ReadFile("kubernetes/pvc-block.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cdi, err := os.ReadFile("kubernetes/cdi-importer-image.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name      string
		doc       []byte
		from, to  string
		wantInErr string
	}{
		{"misspelled field", job, "readOnlyRootFilesystem: true", "readOnlyRootFileSystem: true", "readOnlyRootFileSystem"},
		{"field in the wrong place", job, "      restartPolicy: OnFailure", "      restartPolicy: OnFailure\n      devicePath: /dev/x", "devicePath"},
		{"bad quantity", job, "memory: 512Mi", "memory: 512MB!", "quantit"},
		{"wrong type", job, "runAsUser: 107", "runAsUser: qemu", ""},
		{"unknown kind", job, "kind: Job", "kind: Jobs", ""},
		{"broken YAML", job, "  backoffLimit: 6", "  backoffLimit: [6", ""},
		{"privileged", job, "allowPrivilegeEscalation: false", "allowPrivilegeEscalation: false\n            privileged: true", "privileged"},
		{"escalation", job, "allowPrivilegeEscalation: false", "allowPrivilegeEscalation: true", "escalation"},
		{"writable root", job, "readOnlyRootFilesystem: true", "readOnlyRootFilesystem: false", "writable root"},
		{"capabilities kept", job, `drop: ["ALL"]`, `drop: ["NET_RAW"]`, "capabilities"},
		{"capability added", job, `drop: ["ALL"]`, `drop: ["ALL"]` + "\n              add: [\"SYS_ADMIN\"]", "adds"},
		{"no limits", job, "            limits:\n              cpu: \"2\"\n              memory: 512Mi\n", "", "limits.memory"},
		{"hostPath", job, "          emptyDir:\n            sizeLimit: 16Mi", "          hostPath:\n            path: /var/tmp", "hostPath"},
		{"root allowed", job, "runAsNonRoot: true\n            capabilities", "runAsNonRoot: false\n            capabilities", "root"},
		{"pvc field", pvc, "volumeMode: Block", "volumeMod: Block", "volumeMod"},
		{"pvc quantity", pvc, "storage: 20Gi", "storage: 20 gigs", ""},
		{"cdi unknown field", cdi, "resourceName:", "resourceNames:", "resourceNames"},
		{"cdi patch misses the container", cdi, `"name":"cdi-deployment"`, `"name":"cdi-controller"`, "2 containers"},
		{"cdi patch not strategic", cdi, "type: strategic", "type: merge", "strategic"},
	}
	for _, tc := range cases {
		if !bytes.Contains(tc.doc, []byte(tc.from)) {
			t.Fatalf("%s: the manifest has no %q to break", tc.name, tc.from)
		}
		broken := bytes.Replace(tc.doc, []byte(tc.from), []byte(tc.to), 1)
		err := validate(documents(broken)[0])
		if err == nil || !strings.Contains(err.Error(), tc.wantInErr) {
			t.Errorf("%s: %v, want an error about %q", tc.name, err, tc.wantInErr)
		}
	}
}

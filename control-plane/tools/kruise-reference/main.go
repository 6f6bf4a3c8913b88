// Command kruise-reference answers SidecarSet conformance cases with
// OpenKruise v1.9.0's own code, for the differential suite in
// test/conformance/ (protocol: testkit/conformance/kruise-reference.ts).
// Its twin under ../kruise-reference-1.8 answers with v1.8.2's code.
//
// It reads one JSON case per line on stdin and writes one JSON answer per
// line on stdout, in order, so a single long-lived process serves a whole
// run. Each case gets a fresh controller-runtime fake client holding the
// case's cluster (SidecarSets, Namespaces, Pods), so cases never leak into
// each other. Feature gates are Kruise's defaults.
//
// Kruise 1.9 stores SidecarSets as apps.kruise.io/v1beta1 and its code reads
// them in that version, so the cluster's sets are held as v1beta1: a set
// the case writes in v1alpha1 goes through Kruise's own conversion
// (v1alpha1.SidecarSet.ConvertTo), as the API server would store it through
// Kruise's conversion webhook. Admission cases are sent in the version of
// their object's apiVersion (v1alpha1 when it names none), as the API server
// calls the webhooks for the version the client wrote.
//
// Operations:
//   - default:  Kruise's SidecarSet mutating webhook handler
//   - validate: Kruise's SidecarSet validating webhook handler
//   - inject:   Kruise's Pod mutating webhook handler (the whole handler,
//     as the API server would call it)
//   - status:   Kruise's SidecarSet controller processor (UpdateSidecarSet),
//     answering the status it computed
//   - rollout:  the same pass, answering the pods as stored after it (the
//     in-place updates and HotUpgrade flips it wrote), each pod write it
//     made, each Event it recorded, in order, and the requeue it asked for
//   - controller: the same pass over a cluster that may also hold
//     ControllerRevisions (controller.go), answering everything it leaves:
//     the set as stored, the pods, the pod writes, the Events and the
//     ControllerRevisions (the migration tests hand these to a real API
//     server as Kruise's controller would have written them)
//   - convert:  Kruise's CRD conversion webhook (controller-runtime's
//     conversion handler over Kruise's scheme, as Kruise's manager serves it
//     on /convert): object is a ConversionReview, result the one it answers
//
// A case that Kruise's code panics on, or that cannot be decoded, gets an
// answer with "error" set; the run goes on.
//
// Kruise keeps in-memory state between passes that would leak from one case
// into the next: its update expectations (sidecarcontrol.UpdateExpectations,
// keyed by SidecarSet name, which make a pass stop early while pods it
// updated before still show an old hash) and, new in 1.9, its pod
// resourceVersion expectations (sidecarcontrol.ResourceVersionExpectations,
// set by a HotUpgrade flip). Both are reset before every case, so each case
// is judged as by a controller that just started.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	jsonpatch "github.com/evanphx/json-patch"
	"github.com/openkruise/kruise/apis"
	appsv1alpha1 "github.com/openkruise/kruise/apis/apps/v1alpha1"
	appsv1beta1 "github.com/openkruise/kruise/apis/apps/v1beta1"
	"github.com/openkruise/kruise/pkg/control/sidecarcontrol"
	"github.com/openkruise/kruise/pkg/util"
	"github.com/openkruise/kruise/pkg/util/configuration"
	"github.com/openkruise/kruise/pkg/util/expectations"
	"github.com/openkruise/kruise/pkg/util/fieldindex"
	podmutating "github.com/openkruise/kruise/pkg/webhook/pod/mutating"
	sidecarsetmutating "github.com/openkruise/kruise/pkg/webhook/sidecarset/mutating"
	sidecarsetvalidating "github.com/openkruise/kruise/pkg/webhook/sidecarset/validating"
	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// request is one case, as testkit/conformance/kruise-reference.ts writes it.
type request struct {
	ID         string          `json:"id"`
	Op         string          `json:"op"`
	Operation  string          `json:"operation,omitempty"` // CREATE or UPDATE (default, validate, inject)
	Namespace  string          `json:"namespace,omitempty"` // the admission request's namespace (inject)
	Object     json.RawMessage `json:"object,omitempty"`
	OldObject  json.RawMessage `json:"oldObject,omitempty"`
	Cluster    clusterState    `json:"cluster"`
	SidecarSet json.RawMessage `json:"sidecarSet,omitempty"` // status, rollout: the set whose pass runs
}

type clusterState struct {
	// SidecarSets in either version, as the case wrote them (see storedSet).
	SidecarSets []json.RawMessage  `json:"sidecarSets,omitempty"`
	Namespaces  []corev1.Namespace `json:"namespaces,omitempty"`
	Pods        []corev1.Pod       `json:"pods,omitempty"`
	// ControllerRevisions (controller op): the revisions the pass finds.
	ControllerRevisions []appsv1.ControllerRevision `json:"controllerRevisions,omitempty"`
}

// answer is one reply line. Admission answers carry allowed/code/message and
// the JSON patch as decoded operations; status answers carry status.
type answer struct {
	ID      string                   `json:"id"`
	Allowed *bool                    `json:"allowed,omitempty"`
	Code    int32                    `json:"code,omitempty"`
	Message string                   `json:"message,omitempty"`
	Patch   []map[string]interface{} `json:"patch,omitempty"`
	// Result is the object after the patch, applied to the JSON the patch
	// was computed against: for the pod webhook that is the pod as Kruise's
	// Go types encode it (as the API server, which encodes its own typed
	// object, would apply it), not the case's raw JSON.
	Result json.RawMessage               `json:"result,omitempty"`
	Status *appsv1beta1.SidecarSetStatus `json:"status,omitempty"`
	// Pods (rollout) are the case's pods as stored after the pass, in the
	// fake client's list order (namespace, name); Writes the pod writes the
	// pass made, in order, each with the pod as stored after it.
	Pods   []corev1.Pod `json:"pods,omitempty"`
	Writes []podWrite   `json:"writes,omitempty"`
	// Events (rollout) are the Events the pass recorded, in order.
	Events []event `json:"events,omitempty"`
	// PassError (rollout) is the error UpdateSidecarSet returned: the pass
	// stopped there, and Pods show what it wrote before.
	PassError string `json:"passError,omitempty"`
	// RequeueAfterMs (rollout, controller) is the delay after which the pass
	// asked to run again (0: no requeue asked).
	RequeueAfterMs int64 `json:"requeueAfterMs,omitempty"`
	// StoredSet and Revisions (controller op): the set and every
	// ControllerRevision as stored after the pass.
	StoredSet *appsv1beta1.SidecarSet     `json:"storedSet,omitempty"`
	Revisions []appsv1.ControllerRevision `json:"revisions,omitempty"`
	Error     string                      `json:"error,omitempty"`
}

// event is one Event a pass recorded, on the object it names.
type event struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	Type      string `json:"type"`
	Reason    string `json:"reason"`
	Message   string `json:"message"`
}

// eventLog is an EventRecorder that keeps every Event with the object it is
// about (client-go's FakeRecorder keeps no object name).
type eventLog struct{ events []event }

func (l *eventLog) Event(object runtime.Object, eventtype, reason, message string) {
	e := event{Kind: object.GetObjectKind().GroupVersionKind().Kind, Type: eventtype, Reason: reason, Message: message}
	if accessor, err := meta.Accessor(object); err == nil {
		e.Namespace, e.Name = accessor.GetNamespace(), accessor.GetName()
	}
	if e.Kind == "" {
		switch object.(type) {
		case *corev1.Pod:
			e.Kind = "Pod"
		case *appsv1alpha1.SidecarSet, *appsv1beta1.SidecarSet:
			e.Kind = "SidecarSet"
		}
	}
	l.events = append(l.events, e)
}

func (l *eventLog) Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...interface{}) {
	l.Event(object, eventtype, reason, fmt.Sprintf(messageFmt, args...))
}

func (l *eventLog) AnnotatedEventf(object runtime.Object, _ map[string]string, eventtype, reason, messageFmt string, args ...interface{}) {
	l.Eventf(object, eventtype, reason, messageFmt, args...)
}

// podWrite is one write of a pass to a pod: "update" (the whole pod, as
// Kruise writes images and annotations) or "status" (the pods/status patch
// of the SidecarSetUpgradable condition).
type podWrite struct {
	Kind string     `json:"kind"`
	Pod  corev1.Pod `json:"pod"`
}

// Kruise's controller code looks kinds up in client-go's global scheme (as
// its own tests set it up), so Kruise's types are added there.
var scheme = clientgoscheme.Scheme

func init() {
	utilruntime.Must(apis.AddToScheme(scheme))
	// The request options (CreateOptions...) under meta.k8s.io/v1, the
	// version the API server sends them in.
	metav1.AddToGroupVersion(scheme, metav1.SchemeGroupVersion)
}

// patchMetadataWhitelist is the kruise-configuration ConfigMap that allows
// every annotation key. Kruise refuses patchPodMetadata unless an operator
// whitelists the keys (or enables a non-default gate); this project
// deliberately has no whitelist (docs/CONFORMANCE.md), so the
// reference runs with one that allows all keys.
func patchMetadataWhitelist() *corev1.ConfigMap {
	rules, _ := json.Marshal(configuration.SidecarSetPatchMetadataWhiteList{
		Rules: []configuration.SidecarSetPatchMetadataWhiteRule{{AllowedAnnotationKeyExprs: []string{".*"}}},
	})
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: util.GetKruiseNamespace(), Name: configuration.KruiseConfigurationName},
		Data:       map[string]string{configuration.SidecarSetPatchPodMetadataWhiteListKey: string(rules)},
	}
}

// storedSet reads a SidecarSet written in either version as Kruise 1.9's
// API server stores it: v1beta1 as it is, v1alpha1 (or no apiVersion)
// through Kruise's own conversion.
func storedSet(raw json.RawMessage) (*appsv1beta1.SidecarSet, error) {
	var typeMeta metav1.TypeMeta
	if err := json.Unmarshal(raw, &typeMeta); err != nil {
		return nil, err
	}
	stored := &appsv1beta1.SidecarSet{}
	switch typeMeta.APIVersion {
	case appsv1beta1.GroupVersion.String():
		if err := json.Unmarshal(raw, stored); err != nil {
			return nil, err
		}
	case appsv1alpha1.GroupVersion.String(), "":
		written := &appsv1alpha1.SidecarSet{}
		if err := json.Unmarshal(raw, written); err != nil {
			return nil, err
		}
		if err := written.ConvertTo(stored); err != nil {
			return nil, fmt.Errorf("Kruise's conversion to v1beta1: %v", err)
		}
	default:
		return nil, fmt.Errorf("apiVersion %q is not a SidecarSet version", typeMeta.APIVersion)
	}
	stored.APIVersion, stored.Kind = appsv1beta1.GroupVersion.String(), "SidecarSet"
	return stored, nil
}

func newClient(cluster clusterState, extra ...client.Object) (client.Client, error) {
	return newClientWith(cluster, interceptor.Funcs{}, extra...)
}

func newClientWith(cluster clusterState, funcs interceptor.Funcs, extra ...client.Object) (client.Client, error) {
	objects := []client.Object{patchMetadataWhitelist()}
	for i := range cluster.SidecarSets {
		set, err := storedSet(cluster.SidecarSets[i])
		if err != nil {
			return nil, fmt.Errorf("cluster.sidecarSets[%d]: %v", i, err)
		}
		objects = append(objects, set)
	}
	for i := range cluster.Namespaces {
		objects = append(objects, &cluster.Namespaces[i])
	}
	for i := range cluster.Pods {
		objects = append(objects, &cluster.Pods[i])
	}
	for i := range cluster.ControllerRevisions {
		objects = append(objects, &cluster.ControllerRevisions[i])
	}
	objects = append(objects, extra...)
	// The namespace index is the one Kruise's manager registers and the pod
	// webhook lists SidecarSets by (pkg/util/fieldindex), on the stored
	// version.
	return fake.NewClientBuilder().
		WithScheme(scheme).
		WithObjects(objects...).
		WithStatusSubresource(&appsv1beta1.SidecarSet{}).
		WithIndex(&appsv1beta1.SidecarSet{}, fieldindex.IndexNameForSidecarSetNamespace, fieldindex.IndexSidecarSetV1Beta1).
		WithInterceptorFuncs(funcs).
		Build(), nil
}

// recordPodWrites appends each pod write that went through to writes, with
// the pod as stored after it.
func recordPodWrites(writes *[]podWrite) interceptor.Funcs {
	return interceptor.Funcs{
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			if err := c.Update(ctx, obj, opts...); err != nil {
				return err
			}
			if pod, ok := obj.(*corev1.Pod); ok {
				*writes = append(*writes, podWrite{Kind: "update", Pod: *pod.DeepCopy()})
			}
			return nil
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, subResource string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if err := c.SubResource(subResource).Patch(ctx, obj, patch, opts...); err != nil {
				return err
			}
			if pod, ok := obj.(*corev1.Pod); ok {
				*writes = append(*writes, podWrite{Kind: subResource, Pod: *pod.DeepCopy()})
			}
			return nil
		},
	}
}

func admissionRequest(req *request, resource, kind string) (admission.Request, error) {
	var operation admissionv1.Operation
	switch req.Operation {
	case "CREATE":
		operation = admissionv1.Create
	case "UPDATE":
		operation = admissionv1.Update
	default:
		return admission.Request{}, fmt.Errorf("operation must be CREATE or UPDATE, got %q", req.Operation)
	}
	group, version := "", "v1"
	if kind == "SidecarSet" {
		// The version the client wrote, which the API server calls the
		// webhook for.
		var typeMeta metav1.TypeMeta
		if err := json.Unmarshal(req.Object, &typeMeta); err != nil {
			return admission.Request{}, fmt.Errorf("object: %v", err)
		}
		group, version = appsv1alpha1.GroupVersion.Group, appsv1alpha1.GroupVersion.Version
		if typeMeta.APIVersion == appsv1beta1.GroupVersion.String() {
			version = appsv1beta1.GroupVersion.Version
		}
	}
	// The options the API server sends with every request; Kruise's
	// WorkloadSpread step decodes them.
	options := `{"kind":"CreateOptions","apiVersion":"meta.k8s.io/v1"}`
	if operation == admissionv1.Update {
		options = `{"kind":"UpdateOptions","apiVersion":"meta.k8s.io/v1"}`
	}
	ar := admissionv1.AdmissionRequest{
		UID:       "conformance",
		Options:   runtime.RawExtension{Raw: []byte(options)},
		Kind:      metav1.GroupVersionKind{Group: group, Version: version, Kind: kind},
		Resource:  metav1.GroupVersionResource{Group: group, Version: version, Resource: resource},
		Namespace: req.Namespace,
		Operation: operation,
		Object:    runtime.RawExtension{Raw: req.Object},
	}
	if operation == admissionv1.Update {
		ar.OldObject = runtime.RawExtension{Raw: req.OldObject}
	}
	return admission.Request{AdmissionRequest: ar}, nil
}

// withResult applies the answer's patch to base and records the outcome.
func withResult(out answer, base []byte, response admission.Response) answer {
	if len(response.Patches) == 0 {
		return out
	}
	encoded, err := json.Marshal(response.Patches)
	if err == nil {
		var patch jsonpatch.Patch
		if patch, err = jsonpatch.DecodePatch(encoded); err == nil {
			out.Result, err = patch.Apply(base)
		}
	}
	if err != nil {
		return answer{ID: out.ID, Error: fmt.Sprintf("Kruise's own patch does not apply: %v", err)}
	}
	return out
}

func admissionAnswer(id string, response admission.Response) answer {
	allowed := response.Allowed
	out := answer{ID: id, Allowed: &allowed}
	if response.Result != nil {
		out.Code = response.Result.Code
		out.Message = response.Result.Message
	}
	for _, op := range response.Patches {
		entry := map[string]interface{}{"op": op.Operation, "path": op.Path}
		if op.Operation != "remove" {
			entry["value"] = op.Value
		}
		out.Patch = append(out.Patch, entry)
	}
	return out
}

func handle(req *request) (out answer) {
	out.ID = req.ID
	defer func() {
		if recovered := recover(); recovered != nil {
			out = answer{ID: req.ID, Error: fmt.Sprintf("kruise panicked: %v\n%s", recovered, debug.Stack())}
		}
	}()
	// A controller that just started: no expectations from earlier cases.
	sidecarcontrol.UpdateExpectations = expectations.NewUpdateExpectations(sidecarcontrol.RevisionAdapterImpl)
	sidecarcontrol.ResourceVersionExpectations = expectations.NewResourceVersionExpectation()
	decoder := admission.NewDecoder(scheme)
	ctx := context.Background()
	switch req.Op {
	case "default":
		ar, err := admissionRequest(req, "sidecarsets", "SidecarSet")
		if err != nil {
			return answer{ID: req.ID, Error: err.Error()}
		}
		handler := &sidecarsetmutating.SidecarSetCreateHandler{Decoder: decoder}
		response := handler.Handle(ctx, ar)
		// This handler diffs against the raw object it received.
		return withResult(admissionAnswer(req.ID, response), req.Object, response)
	case "validate":
		ar, err := admissionRequest(req, "sidecarsets", "SidecarSet")
		if err != nil {
			return answer{ID: req.ID, Error: err.Error()}
		}
		c, err := newClient(req.Cluster)
		if err != nil {
			return answer{ID: req.ID, Error: err.Error()}
		}
		handler := &sidecarsetvalidating.SidecarSetCreateUpdateHandler{Client: c, Decoder: decoder}
		return admissionAnswer(req.ID, handler.Handle(ctx, ar))
	case "inject":
		ar, err := admissionRequest(req, "pods", "Pod")
		if err != nil {
			return answer{ID: req.ID, Error: err.Error()}
		}
		c, err := newClient(req.Cluster)
		if err != nil {
			return answer{ID: req.ID, Error: err.Error()}
		}
		handler := &podmutating.PodCreateHandler{Client: c, Decoder: decoder}
		response := handler.Handle(ctx, ar)
		// This handler diffs two encodings of its typed pod.
		pod := &corev1.Pod{}
		if err := json.Unmarshal(req.Object, pod); err != nil {
			return answer{ID: req.ID, Error: fmt.Sprintf("pod: %v", err)}
		}
		if pod.Namespace == "" {
			pod.Namespace = req.Namespace // as the handler does before it diffs
		}
		base, err := json.Marshal(pod)
		if err != nil {
			return answer{ID: req.ID, Error: fmt.Sprintf("pod: %v", err)}
		}
		return withResult(admissionAnswer(req.ID, response), base, response)
	case "status", "rollout":
		return statusOrRollout(ctx, req)
	case "controller":
		return controllerPass(ctx, req)
	case "convert":
		return convert(req)
	default:
		return answer{ID: req.ID, Error: fmt.Sprintf("unknown op %q (want default, validate, inject, status, rollout, controller or convert)", req.Op)}
	}
}

func main() {
	// Kruise logs through klog (errors included, for cases it refuses);
	// stderr is kept for this program's own failures.
	flags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(flags)
	for name, value := range map[string]string{"logtostderr": "false", "alsologtostderr": "false", "stderrthreshold": "FATAL"} {
		if err := flags.Set(name, value); err != nil {
			fmt.Fprintf(os.Stderr, "kruise-reference: klog flag %s: %v\n", name, err)
			os.Exit(1)
		}
	}
	klog.SetOutput(io.Discard)

	reader := bufio.NewReaderSize(os.Stdin, 1<<20)
	writer := bufio.NewWriter(os.Stdout)
	encoder := json.NewEncoder(writer)
	for {
		line, readErr := reader.ReadBytes('\n')
		if len(line) > 0 {
			var req request
			var out answer
			if err := json.Unmarshal(line, &req); err != nil {
				out = answer{Error: fmt.Sprintf("cannot decode case: %v", err)}
			} else {
				out = handle(&req)
			}
			if err := encoder.Encode(out); err != nil {
				fmt.Fprintf(os.Stderr, "kruise-reference: cannot write answer: %v\n", err)
				os.Exit(1)
			}
			// One answer per case, flushed at once: the caller waits for it.
			if err := writer.Flush(); err != nil {
				fmt.Fprintf(os.Stderr, "kruise-reference: cannot write answer: %v\n", err)
				os.Exit(1)
			}
		}
		if readErr == io.EOF {
			return
		}
		if readErr != nil {
			fmt.Fprintf(os.Stderr, "kruise-reference: cannot read stdin: %v\n", readErr)
			os.Exit(1)
		}
	}
}

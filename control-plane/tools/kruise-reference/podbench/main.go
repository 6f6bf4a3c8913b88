// Command podbench times OpenKruise v1.9.0's pod mutating webhook in
// process, for `npm run bench` (scripts/bench/kruise-pod.ts, protocol in
// testkit/bench/kruise-pod-bench.ts). It is a program of its own, apart
// from the conformance reference in ../main.go, so that neither changes
// the other's binary.
//
// One review is what controller-runtime's webhook server does with one
// request once TLS and HTTP are done: admission.Webhook.ServeHTTP reads the
// body, decodes the AdmissionReview, runs Kruise's PodCreateHandler and
// encodes the answer (its JSON Patch included). That is the work
// serveAdmission does in this project's door, so the two are compared on
// the same request body.
//
// The handler reads SidecarSets as Kruise's manager serves them: from an
// informer cache, by its namespace field index, without a deep copy
// (Kruise lists with utilclient.DisableDeepCopy): a List is an index lookup
// and a struct copy per set. Kinds the bench cluster has none of
// (WorkloadSpreads, PodUnavailableBudgets, PersistentPodStates...) list
// empty at once, as an empty informer does; a Get goes to a fake client
// holding the same cluster (the pod's ReplicaSet is not in it, so the
// PodUnavailableBudget step's owner lookup ends at a NotFound, where a
// real cluster would read the ReplicaSet and its Deployment from the cache).
//
// Protocol: one JSON line per command on stdin, one JSON line per answer on
// stdout.
//
//	{"op":"setup","body":"<AdmissionReview JSON>","cluster":{"sidecarSets":[...],"namespaces":[...]}}
//	  -> {"statusCode":200,"allowed":true,"patchOps":17,"answerBytes":11000}
//	{"op":"run","runMs":1000}
//	  -> {"reviews":1234,"ns":1000000000,"nsPerOp":810372.1,"cpuNsPerOp":790112.5}
//
// Timing is inside this process (the wall clock and the process's CPU time
// around the loop), so neither process start nor the pipe is counted.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/openkruise/kruise/apis"
	appsv1alpha1 "github.com/openkruise/kruise/apis/apps/v1alpha1"
	appsv1beta1 "github.com/openkruise/kruise/apis/apps/v1beta1"
	"github.com/openkruise/kruise/pkg/util/controllerfinder"
	"github.com/openkruise/kruise/pkg/util/fieldindex"
	podmutating "github.com/openkruise/kruise/pkg/webhook/pod/mutating"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

var scheme = clientgoscheme.Scheme

func init() {
	utilruntime.Must(apis.AddToScheme(scheme))
	metav1.AddToGroupVersion(scheme, metav1.SchemeGroupVersion)
}

type command struct {
	Op      string       `json:"op"`
	Body    string       `json:"body,omitempty"`
	Cluster clusterState `json:"cluster"`
	RunMs   int          `json:"runMs,omitempty"`
}

type clusterState struct {
	SidecarSets []appsv1alpha1.SidecarSet `json:"sidecarSets,omitempty"`
	Namespaces  []corev1.Namespace        `json:"namespaces,omitempty"`
}

type reply struct {
	StatusCode  int     `json:"statusCode,omitempty"`
	Allowed     *bool   `json:"allowed,omitempty"`
	PatchOps    int     `json:"patchOps,omitempty"`
	AnswerBytes int     `json:"answerBytes,omitempty"`
	Message     string  `json:"message,omitempty"`
	Reviews     int     `json:"reviews,omitempty"`
	Ns          int64   `json:"ns,omitempty"`
	NsPerOp     float64 `json:"nsPerOp,omitempty"`
	CPUNsPerOp  float64 `json:"cpuNsPerOp,omitempty"`
	Error       string  `json:"error,omitempty"`
}

// informerLike is a client whose Lists answer as Kruise's informer cache
// with DisableDeepCopy: SidecarSets by the namespace field index, shared
// and not copied; every other kind empty. Kruise 1.9 reads SidecarSets in
// their stored version, v1beta1: the bench's v1alpha1 sets are converted
// once, by Kruise's own conversion, as its API server would store them.
func informerLike(cluster clusterState) (client.Client, error) {
	byIndex := map[string][]appsv1beta1.SidecarSet{}
	objects := []client.Object{}
	for i := range cluster.SidecarSets {
		set := &appsv1beta1.SidecarSet{}
		if err := cluster.SidecarSets[i].ConvertTo(set); err != nil {
			return nil, fmt.Errorf("podbench: Kruise's conversion of sidecarSets[%d]: %v", i, err)
		}
		for _, value := range fieldindex.IndexSidecarSetV1Beta1(set) {
			byIndex[value] = append(byIndex[value], *set)
		}
		objects = append(objects, set)
	}
	for i := range cluster.Namespaces {
		objects = append(objects, &cluster.Namespaces[i])
	}
	return fake.NewClientBuilder().
		WithScheme(scheme).
		WithObjects(objects...).
		WithInterceptorFuncs(interceptor.Funcs{
			List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
				sets, ok := list.(*appsv1beta1.SidecarSetList)
				if !ok {
					return meta.SetList(list, nil)
				}
				options := (&client.ListOptions{}).ApplyOptions(opts)
				if options.FieldSelector == nil {
					return fmt.Errorf("podbench: SidecarSets listed without the namespace index")
				}
				value, found := options.FieldSelector.RequiresExactMatch(fieldindex.IndexNameForSidecarSetNamespace)
				if !found {
					return fmt.Errorf("podbench: SidecarSets listed by %s, not the namespace index", options.FieldSelector)
				}
				// The cache appends its shared objects and SetList copies each struct into Items.
				sets.Items = append(sets.Items[:0], byIndex[value]...)
				return nil
			},
		}).
		Build(), nil
}

type bench struct {
	webhook *admission.Webhook
	body    []byte
}

func (b *bench) review() *httptest.ResponseRecorder {
	request := httptest.NewRequest(http.MethodPost, "/mutate-pod", bytes.NewReader(b.body))
	request.Header.Set("Content-Type", "application/json")
	recorder := httptest.NewRecorder()
	b.webhook.ServeHTTP(recorder, request)
	return recorder
}

func setup(cmd *command) (*bench, reply) {
	c, err := informerLike(cmd.Cluster)
	if err != nil {
		return nil, reply{Error: err.Error()}
	}
	// Kruise's manager sets this global up at start; the PodUnavailableBudget
	// step looks the pod's owner up through it (a ReplicaSet the bench
	// cluster does not hold, so the lookup ends at a NotFound).
	controllerfinder.Finder = &controllerfinder.ControllerFinder{Client: c}
	handler := &podmutating.PodCreateHandler{Client: c, Decoder: admission.NewDecoder(scheme)}
	b := &bench{webhook: &admission.Webhook{Handler: handler}, body: []byte(cmd.Body)}
	recorder := b.review()
	out := reply{StatusCode: recorder.Code, AnswerBytes: recorder.Body.Len()}
	review := admissionv1.AdmissionReview{}
	if err := json.Unmarshal(recorder.Body.Bytes(), &review); err != nil || review.Response == nil {
		out.Error = fmt.Sprintf("Kruise's answer is not an AdmissionReview: %v: %s", err, recorder.Body.String())
		return nil, out
	}
	allowed := review.Response.Allowed
	out.Allowed = &allowed
	if review.Response.Result != nil {
		out.Message = review.Response.Result.Message
	}
	var ops []json.RawMessage
	if len(review.Response.Patch) > 0 {
		if err := json.Unmarshal(review.Response.Patch, &ops); err != nil {
			out.Error = fmt.Sprintf("Kruise's patch is not a JSON list: %v", err)
			return nil, out
		}
	}
	out.PatchOps = len(ops)
	return b, out
}

func (b *bench) run(runMs int) reply {
	if runMs <= 0 {
		return reply{Error: "runMs must be > 0"}
	}
	budget := time.Duration(runMs) * time.Millisecond
	// The clock is read every batch, as the Node side's loop does.
	const batch = 50
	reviews := 0
	cpuStarted := cpuTime()
	started := time.Now()
	var elapsed time.Duration
	for elapsed < budget {
		for i := 0; i < batch; i++ {
			if recorder := b.review(); recorder.Code != http.StatusOK {
				return reply{Error: fmt.Sprintf("review %d answered %d: %s", reviews+i, recorder.Code, recorder.Body.String())}
			}
		}
		reviews += batch
		elapsed = time.Since(started)
	}
	cpu := cpuTime() - cpuStarted
	return reply{Reviews: reviews, Ns: elapsed.Nanoseconds(), NsPerOp: float64(elapsed.Nanoseconds()) / float64(reviews), CPUNsPerOp: float64(cpu) / float64(reviews)}
}

// cpuTime is the CPU time this process used so far (user and system, every
// thread: the collector's too), in nanoseconds. On a shared machine it
// counts the work, where the wall clock also counts waiting for a core.
func cpuTime() int64 {
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		return 0
	}
	return usage.Utime.Nano() + usage.Stime.Nano()
}

func main() {
	klog.SetOutput(io.Discard)
	klog.LogToStderr(false)
	ctrllog.SetLogger(logr.Discard())

	reader := bufio.NewReaderSize(os.Stdin, 1<<20)
	writer := bufio.NewWriter(os.Stdout)
	encoder := json.NewEncoder(writer)
	var current *bench
	for {
		line, readErr := reader.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var cmd command
			var out reply
			if err := json.Unmarshal(line, &cmd); err != nil {
				out = reply{Error: fmt.Sprintf("cannot decode command: %v", err)}
			} else {
				switch cmd.Op {
				case "setup":
					current, out = setup(&cmd)
				case "run":
					if current == nil {
						out = reply{Error: "run before a successful setup"}
					} else {
						out = current.run(cmd.RunMs)
					}
				default:
					out = reply{Error: fmt.Sprintf("unknown op %q (want setup or run)", cmd.Op)}
				}
			}
			if err := encoder.Encode(out); err != nil {
				fmt.Fprintf(os.Stderr, "podbench: cannot write answer: %v\n", err)
				os.Exit(1)
			}
			if err := writer.Flush(); err != nil {
				fmt.Fprintf(os.Stderr, "podbench: cannot write answer: %v\n", err)
				os.Exit(1)
			}
		}
		if readErr == io.EOF {
			return
		}
		if readErr != nil {
			fmt.Fprintf(os.Stderr, "podbench: cannot read stdin: %v\n", readErr)
			os.Exit(1)
		}
	}
}

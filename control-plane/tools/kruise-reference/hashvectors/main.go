// Command hashvectors prints the two SidecarSet hashes (kruise.io/sidecarset-hash
// and kruise.io/sidecarset-hash-without-image) as OpenKruise v1.9.0's own code
// computes them, for the golden vectors of test/sidecarset/ (written by
// scripts/hash-vectors.ts). It is a program of its own, apart from the
// conformance reference in ../main.go, so that neither changes the other's
// binary; it shares that module, so Kruise's dependency versions are the same.
//
// Protocol: one JSON line per set on stdin, one JSON line per answer on
// stdout, in order.
//
//	{"set": <a SidecarSet, apps.kruise.io/v1alpha1 or v1beta1>}
//	  -> {"asWritten": {"hash": "...", "withoutImage": "..."},
//	      "stored":    {"hash": "...", "withoutImage": "..."}}
//
// asWritten is what Kruise 1.9's defaulting webhook writes on the set as it
// was sent: defaults.SetHashSidecarSet (sidecarcontrol.SidecarSetHash and
// SidecarSetHashWithoutImage over the v1alpha1 types) for a v1alpha1 set,
// defaults.SetHashSidecarSetV1beta1 for a v1beta1 one. stored is what its
// controller computes over the set as the cluster stores it, v1beta1
// (history_control.go: SidecarSetHashV1beta1 and
// SidecarSetHashWithoutImageV1beta1): a v1alpha1 set is first converted by
// Kruise's own ConvertTo, as the CRD's conversion webhook does. A set that
// cannot be decoded answers {"error": "..."}.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/openkruise/kruise/apis/apps/defaults"
	appsv1alpha1 "github.com/openkruise/kruise/apis/apps/v1alpha1"
	appsv1beta1 "github.com/openkruise/kruise/apis/apps/v1beta1"
	"github.com/openkruise/kruise/pkg/control/sidecarcontrol"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

type hashes struct {
	Hash         string `json:"hash"`
	WithoutImage string `json:"withoutImage"`
}

type answer struct {
	AsWritten *hashes `json:"asWritten,omitempty"`
	Stored    *hashes `json:"stored,omitempty"`
	Error     string  `json:"error,omitempty"`
}

var scheme = runtime.NewScheme()

func init() {
	utilruntime.Must(appsv1alpha1.AddToScheme(scheme))
	utilruntime.Must(appsv1beta1.AddToScheme(scheme))
}

// decoder reads a set as controller-runtime's admission decoder does (the
// scheme's universal deserializer), so its apiVersion picks the Go type.
var decoder = serializer.NewCodecFactory(scheme).UniversalDeserializer()

// storedHashes are the controller's hashes of a v1beta1 set.
func storedHashes(set *appsv1beta1.SidecarSet) (*hashes, error) {
	hash, err := sidecarcontrol.SidecarSetHashV1beta1(set)
	if err != nil {
		return nil, err
	}
	withoutImage, err := sidecarcontrol.SidecarSetHashWithoutImageV1beta1(set)
	if err != nil {
		return nil, err
	}
	return &hashes{Hash: hash, WithoutImage: withoutImage}, nil
}

func hashesOf(raw []byte) answer {
	object, _, err := decoder.Decode(raw, nil, nil)
	if err != nil {
		return answer{Error: fmt.Sprintf("cannot decode the set: %v", err)}
	}
	switch set := object.(type) {
	case *appsv1alpha1.SidecarSet:
		written := set.DeepCopy()
		if err := defaults.SetHashSidecarSet(written); err != nil {
			return answer{Error: fmt.Sprintf("SetHashSidecarSet: %v", err)}
		}
		beta := &appsv1beta1.SidecarSet{}
		if err := set.DeepCopy().ConvertTo(beta); err != nil {
			return answer{Error: fmt.Sprintf("ConvertTo v1beta1: %v", err)}
		}
		stored, err := storedHashes(beta)
		if err != nil {
			return answer{Error: err.Error()}
		}
		return answer{AsWritten: annotated(written.Annotations), Stored: stored}
	case *appsv1beta1.SidecarSet:
		written := set.DeepCopy()
		if err := defaults.SetHashSidecarSetV1beta1(written); err != nil {
			return answer{Error: fmt.Sprintf("SetHashSidecarSetV1beta1: %v", err)}
		}
		stored, err := storedHashes(set)
		if err != nil {
			return answer{Error: err.Error()}
		}
		return answer{AsWritten: annotated(written.Annotations), Stored: stored}
	default:
		return answer{Error: fmt.Sprintf("not a SidecarSet: %T", object)}
	}
}

func annotated(annotations map[string]string) *hashes {
	return &hashes{Hash: annotations[sidecarcontrol.SidecarSetHashAnnotation], WithoutImage: annotations[sidecarcontrol.SidecarSetHashWithoutImageAnnotation]}
}

func main() {
	reader := bufio.NewReaderSize(os.Stdin, 1<<20)
	writer := bufio.NewWriter(os.Stdout)
	encoder := json.NewEncoder(writer)
	for {
		line, readErr := reader.ReadBytes('\n')
		if len(line) > 0 {
			var in struct {
				Set json.RawMessage `json:"set"`
			}
			out := answer{}
			if err := json.Unmarshal(line, &in); err != nil {
				out.Error = fmt.Sprintf("cannot decode the line: %v", err)
			} else {
				out = hashesOf(in.Set)
			}
			if err := encoder.Encode(out); err != nil {
				fmt.Fprintf(os.Stderr, "hashvectors: cannot write answer: %v\n", err)
				os.Exit(1)
			}
			// One answer per line, flushed at once: the caller waits for it before sending the next.
			if err := writer.Flush(); err != nil {
				fmt.Fprintf(os.Stderr, "hashvectors: cannot write answer: %v\n", err)
				os.Exit(1)
			}
		}
		if readErr == io.EOF {
			break
		}
		if readErr != nil {
			fmt.Fprintf(os.Stderr, "hashvectors: cannot read stdin: %v\n", readErr)
			os.Exit(1)
		}
	}
}

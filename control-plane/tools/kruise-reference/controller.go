package main

import (
	"context"
	"fmt"

	appsv1beta1 "github.com/openkruise/kruise/apis/apps/v1beta1"
	sidecarsetcontroller "github.com/openkruise/kruise/pkg/controller/sidecarset"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// pass is one run of Kruise's SidecarSet controller pass (UpdateSidecarSet)
// over the case's cluster, with what it leaves to be read back.
type pass struct {
	client client.Client
	set    string
	out    answer
}

// runPass runs UpdateSidecarSet for the case's set (written in either
// version; held as v1beta1, as Kruise 1.9 stores it) over the case's
// cluster. The set is in the cluster too (its status is written back
// there); it is added when the case's cluster does not list it already.
func runPass(req *request) (*pass, error) {
	set, err := storedSet(req.SidecarSet)
	if err != nil {
		return nil, fmt.Errorf("sidecarSet: %v", err)
	}
	var extra []client.Object
	listed := false
	for i := range req.Cluster.SidecarSets {
		other, err := storedSet(req.Cluster.SidecarSets[i])
		if err != nil {
			return nil, fmt.Errorf("cluster.sidecarSets[%d]: %v", i, err)
		}
		listed = listed || other.Name == set.Name
	}
	if !listed {
		extra = append(extra, set.DeepCopy())
	}
	var writes []podWrite
	c, err := newClientWith(req.Cluster, recordPodWrites(&writes), extra...)
	if err != nil {
		return nil, err
	}
	events := &eventLog{}
	processor := sidecarsetcontroller.NewSidecarSetProcessor(c, events)
	result, passErr := processor.UpdateSidecarSet(set)
	out := answer{ID: req.ID, Writes: writes, Events: events.events, RequeueAfterMs: result.RequeueAfter.Milliseconds()}
	if passErr != nil {
		out.PassError = passErr.Error()
	}
	// UpdateSidecarSet leaves the status it computed on the object it was
	// given.
	status := set.Status
	out.Status = &status
	return &pass{client: c, set: set.Name, out: out}, nil
}

// pods lists the case's pods as stored after the pass, in the fake
// client's list order (namespace, name).
func (p *pass) pods(ctx context.Context) ([]corev1.Pod, error) {
	pods := &corev1.PodList{}
	if err := p.client.List(ctx, pods); err != nil {
		return nil, fmt.Errorf("list pods after the pass: %v", err)
	}
	return pods.Items, nil
}

// statusOrRollout answers the status op (the status the pass computed) or
// the rollout op (the pods, writes, Events and requeue it left).
func statusOrRollout(ctx context.Context, req *request) answer {
	p, err := runPass(req)
	if err != nil {
		return answer{ID: req.ID, Error: err.Error()}
	}
	if req.Op == "status" {
		if p.out.PassError != "" {
			return answer{ID: req.ID, Error: fmt.Sprintf("UpdateSidecarSet: %v", p.out.PassError)}
		}
		return answer{ID: req.ID, Status: p.out.Status}
	}
	out := p.out
	out.Status = nil
	if out.Pods, err = p.pods(ctx); err != nil {
		return answer{ID: req.ID, Error: err.Error()}
	}
	return out
}

// controllerPass runs Kruise's SidecarSet controller pass once over the
// case's cluster, ControllerRevisions included, and answers everything the
// pass leaves behind: the set as stored (the status Kruise wrote, or the one
// it found consistent), the pods as stored, the pod writes and Events in
// order, and every ControllerRevision as stored (the ones
// registerLatestRevision created, bumped or kept, in Kruise's namespace).
// The migration tests use it twice: to produce what a cluster run by Kruise
// holds, and to ask Kruise what it makes of a cluster this project has been
// running.
func controllerPass(ctx context.Context, req *request) answer {
	p, err := runPass(req)
	if err != nil {
		return answer{ID: req.ID, Error: err.Error()}
	}
	out := p.out
	out.Status = nil
	stored := &appsv1beta1.SidecarSet{}
	if err := p.client.Get(ctx, client.ObjectKey{Name: p.set}, stored); err != nil {
		return answer{ID: req.ID, Error: fmt.Sprintf("read the set after the pass: %v", err)}
	}
	out.StoredSet = stored
	if out.Pods, err = p.pods(ctx); err != nil {
		return answer{ID: req.ID, Error: err.Error()}
	}
	revisions := &appsv1.ControllerRevisionList{}
	if err := p.client.List(ctx, revisions); err != nil {
		return answer{ID: req.ID, Error: fmt.Sprintf("list ControllerRevisions after the pass: %v", err)}
	}
	out.Revisions = revisions.Items
	return out
}

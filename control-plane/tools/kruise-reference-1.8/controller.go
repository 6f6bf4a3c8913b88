package main

import (
	"context"
	"encoding/json"
	"fmt"

	appsv1alpha1 "github.com/openkruise/kruise/apis/apps/v1alpha1"
	sidecarsetcontroller "github.com/openkruise/kruise/pkg/controller/sidecarset"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// controllerPass runs Kruise's SidecarSet controller pass (UpdateSidecarSet)
// once over the case's cluster, ControllerRevisions included, and answers
// everything the pass leaves behind: the set as stored (the status Kruise
// wrote, or the one it found consistent), the pods as stored, the pod
// writes and Events in order, and every ControllerRevision as stored (the
// ones registerLatestRevision created, bumped or kept, in Kruise's
// namespace). The migration tests use it twice: to produce what a cluster
// run by Kruise holds, and to ask Kruise what it makes of a cluster this
// project has been running.
func controllerPass(ctx context.Context, req *request) answer {
	set := &appsv1alpha1.SidecarSet{}
	if err := json.Unmarshal(req.SidecarSet, set); err != nil {
		return answer{ID: req.ID, Error: fmt.Sprintf("sidecarSet: %v", err)}
	}
	var extra []client.Object
	listed := false
	for i := range req.Cluster.SidecarSets {
		listed = listed || req.Cluster.SidecarSets[i].Name == set.Name
	}
	if !listed {
		extra = append(extra, set.DeepCopy())
	}
	var writes []podWrite
	c := newClientWith(req.Cluster, recordPodWrites(&writes), extra...)
	events := &eventLog{}
	processor := sidecarsetcontroller.NewSidecarSetProcessor(c, events)
	_, passErr := processor.UpdateSidecarSet(set)
	out := answer{ID: req.ID, Writes: writes, Events: events.events}
	if passErr != nil {
		out.PassError = passErr.Error()
	}
	stored := &appsv1alpha1.SidecarSet{}
	if err := c.Get(ctx, client.ObjectKey{Name: set.Name}, stored); err != nil {
		return answer{ID: req.ID, Error: fmt.Sprintf("read the set after the pass: %v", err)}
	}
	out.StoredSet = stored
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods); err != nil {
		return answer{ID: req.ID, Error: fmt.Sprintf("list pods after the pass: %v", err)}
	}
	out.Pods = pods.Items
	revisions := &appsv1.ControllerRevisionList{}
	if err := c.List(ctx, revisions); err != nil {
		return answer{ID: req.ID, Error: fmt.Sprintf("list ControllerRevisions after the pass: %v", err)}
	}
	out.Revisions = revisions.Items
	return out
}

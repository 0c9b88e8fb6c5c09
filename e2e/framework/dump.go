package framework

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// DumpNamespace lists every listable namespaced resource in namespace, writes the objects as YAML to fullPath
// and returns a summary: one line per object with its phase and conditions, then the namespace's events in time
// order.
func DumpNamespace(ctx context.Context, clients *Clients, namespace, fullPath string) (string, error) {
	resources, discoveryErr := namespacedResources(clients)
	var summary, full strings.Builder
	var errs []error
	if discoveryErr != nil {
		errs = append(errs, discoveryErr)
	}
	for _, gvr := range resources {
		switch {
		case gvr.Group == "" && gvr.Resource == "events", gvr.Group == "events.k8s.io":
			continue // Printed below, in time order.
		case gvr.Group == "" && gvr.Resource == "endpoints":
			continue // Deprecated (listing it logs a warning); EndpointSlices hold the same.
		}
		list, err := clients.Dynamic.Resource(gvr).Namespace(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			errs = append(errs, fmt.Errorf("can't list %s: %w", gvr, err))
			continue
		}
		for i := range list.Items {
			obj := &list.Items[i]
			fmt.Fprintf(&summary, "%s %s%s\n", obj.GetKind(), obj.GetName(), statusSummary(obj))
			obj.SetManagedFields(nil)
			data, err := yaml.Marshal(obj.Object)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			full.WriteString("---\n")
			full.Write(data)
		}
	}
	events, err := clients.Kube.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		errs = append(errs, fmt.Errorf("can't list events: %w", err))
	} else {
		items := events.Items
		sort.SliceStable(items, func(i, j int) bool { return eventTime(&items[i]).Before(eventTime(&items[j])) })
		fmt.Fprintf(&summary, "events:\n")
		for i := range items {
			e := &items[i]
			fmt.Fprintf(&summary, "  %s %s %s %s/%s: %s (x%d)\n", eventTime(e).Format("15:04:05.000"), e.Type, e.Reason,
				e.InvolvedObject.Kind, e.InvolvedObject.Name, strings.TrimSpace(e.Message), max(e.Count, 1))
		}
	}
	if fullPath != "" {
		if err := os.WriteFile(fullPath, []byte(full.String()), 0o644); err != nil {
			errs = append(errs, fmt.Errorf("can't write dump: %w", err))
		}
	}
	return summary.String(), errors.Join(errs...)
}

// namespacedResources returns the namespaced resources that can be listed, at their preferred versions.
func namespacedResources(clients *Clients) ([]schema.GroupVersionResource, error) {
	lists, err := clients.Kube.Discovery().ServerPreferredNamespacedResources()
	var out []schema.GroupVersionResource
	for _, list := range lists {
		gv, parseErr := schema.ParseGroupVersion(list.GroupVersion)
		if parseErr != nil {
			continue
		}
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") || !hasVerb(r.Verbs, "list") {
				continue
			}
			out = append(out, gv.WithResource(r.Name))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	if err != nil {
		return out, fmt.Errorf("discovery is incomplete: %w", err)
	}
	return out, nil
}

func hasVerb(verbs metav1.Verbs, verb string) bool {
	for _, v := range verbs {
		if v == verb {
			return true
		}
	}
	return false
}

// statusSummary renders status.phase and status.conditions as " phase=X [Type=Status(Reason) ...]".
func statusSummary(obj *unstructured.Unstructured) string {
	var b strings.Builder
	if phase, ok, _ := unstructured.NestedString(obj.Object, "status", "phase"); ok {
		fmt.Fprintf(&b, " phase=%s", phase)
	}
	conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	if len(conditions) > 0 {
		parts := make([]string, 0, len(conditions))
		for _, c := range conditions {
			m, ok := c.(map[string]interface{})
			if !ok {
				continue
			}
			part := fmt.Sprintf("%v=%v", m["type"], m["status"])
			if reason, ok := m["reason"].(string); ok && reason != "" {
				part += "(" + reason + ")"
			}
			parts = append(parts, part)
		}
		fmt.Fprintf(&b, " [%s]", strings.Join(parts, " "))
	}
	return b.String()
}

func eventTime(e *corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	default:
		return e.CreationTimestamp.Time
	}
}

package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// serveControl serves the inspection and control routes (no credentials, plain JSON).
func (s *Server) serveControl(w http.ResponseWriter, r *http.Request) {
	reply := func(status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(append(marshalJSON(v), '\n'))
	}
	fail := func(status int, msg string) { reply(status, map[string]string{"error": msg}) }
	// decode reads the body into v, refusing unknown fields; an empty body
	// leaves v as it is when emptyOK. It fails the request when it cannot.
	decode := func(what string, v any, emptyOK bool) bool {
		raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
		if err != nil {
			fail(http.StatusBadRequest, "read body: "+err.Error())
			return false
		}
		if emptyOK && len(bytes.TrimSpace(raw)) == 0 {
			return true
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			fail(http.StatusBadRequest, what+": "+err.Error())
			return false
		}
		return true
	}
	route := r.Method + " " + r.URL.Path
	if rest, ok := strings.CutPrefix(route, "POST /_sandbox/groups/"); ok {
		id, err := strconv.ParseInt(strings.TrimSuffix(rest, "/rename"), 10, 64)
		if err != nil || !strings.HasSuffix(rest, "/rename") {
			fail(http.StatusNotFound, "no such sandbox route: "+route)
			return
		}
		var body struct {
			Name string `json:"name"`
		}
		if !decode("rename", &body, false) {
			return
		}
		if err := s.RenameGroup(id, body.Name); err != nil {
			fail(http.StatusBadRequest, err.Error())
			return
		}
		reply(http.StatusOK, map[string]bool{"ok": true})
		return
	}
	if id, ok := strings.CutPrefix(route, "DELETE /_sandbox/groups/"); ok {
		if err := s.DeleteGroup(id); err != nil {
			fail(http.StatusNotFound, err.Error())
			return
		}
		reply(http.StatusOK, map[string]bool{"ok": true})
		return
	}
	if rest, ok := strings.CutPrefix(route, "POST /_sandbox/grade_managers/"); ok {
		id, err := strconv.ParseInt(strings.TrimSuffix(rest, "/forget_creator"), 10, 64)
		if err == nil && strings.HasSuffix(rest, "/forget_creator") {
			err = s.ForgetCreator(id)
		} else {
			err = errors.New("no such sandbox route: " + route)
		}
		if err != nil {
			fail(http.StatusNotFound, err.Error())
			return
		}
		reply(http.StatusOK, map[string]bool{"ok": true})
		return
	}
	switch route {
	case "GET /_sandbox/policies":
		q := r.URL.Query()
		reply(http.StatusOK, s.Policies(PolicyFilter{System: q.Get("system"), SubjectType: q.Get("subject_type"),
			SubjectID: q.Get("subject_id"), Action: q.Get("action")}))
	case "GET /_sandbox/grade_managers":
		reply(http.StatusOK, s.Management())
	case "GET /_sandbox/stats":
		reply(http.StatusOK, s.Stats())
	case "POST /_sandbox/reset":
		if err := s.Reset(); err != nil {
			fail(http.StatusInternalServerError, err.Error())
			return
		}
		reply(http.StatusOK, map[string]bool{"ok": true})
	case "POST /_sandbox/template_policies":
		var body struct {
			System string `json:"system"`
			TemplatePolicy
		}
		if !decode("template policy", &body, false) {
			return
		}
		if err := s.AddTemplatePolicy(body.System, body.TemplatePolicy); err != nil {
			fail(http.StatusBadRequest, err.Error())
			return
		}
		reply(http.StatusOK, map[string]bool{"ok": true})
	case "POST /_sandbox/expression_policies":
		var body struct {
			System string `json:"system"`
			ExpressionPolicy
		}
		if !decode("expression policy", &body, false) {
			return
		}
		id, err := s.AddExpressionPolicy(body.System, body.ExpressionPolicy)
		if err != nil {
			fail(http.StatusBadRequest, err.Error())
			return
		}
		reply(http.StatusOK, map[string]any{"ok": true, "backend_id": id})
	case "POST /_sandbox/frozen_subjects":
		var body struct {
			Type   string `json:"type"`
			ID     string `json:"id"`
			Frozen bool   `json:"frozen"`
		}
		if !decode("frozen subject", &body, false) {
			return
		}
		if err := s.Freeze(body.Type, body.ID, body.Frozen); err != nil {
			fail(http.StatusBadRequest, err.Error())
			return
		}
		reply(http.StatusOK, map[string]bool{"ok": true})
	case "POST /_sandbox/faults":
		var f Faults
		if !decode("faults", &f, true) {
			return
		}
		if err := s.SetFaults(f); err != nil {
			fail(http.StatusBadRequest, err.Error())
			return
		}
		reply(http.StatusOK, f)
	default:
		fail(http.StatusNotFound, "no such sandbox route: "+route)
	}
}

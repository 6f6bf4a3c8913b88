package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	"sigs.k8s.io/controller-runtime/pkg/webhook/conversion"
)

// conversionHandler is Kruise's CRD conversion webhook: controller-runtime's
// conversion handler over Kruise's scheme, which Kruise's manager registers
// on /convert (pkg/webhook/server.go); for SidecarSets it converts through
// the hub, v1beta1, with Kruise's ConvertTo/ConvertFrom.
var conversionHandler = conversion.NewWebhookHandler(scheme)

// convert answers a ConversionReview (the case's object) as Kruise's
// webhook does: result is the ConversionReview it answers, code its HTTP
// status (400 when it cannot read the review, with no result).
func convert(req *request) answer {
	recorder := httptest.NewRecorder()
	request := httptest.NewRequest(http.MethodPost, "/convert", bytes.NewReader(req.Object))
	request.Header.Set("Content-Type", "application/json")
	conversionHandler.ServeHTTP(recorder, request)
	out := answer{ID: req.ID, Code: int32(recorder.Code)}
	body := bytes.TrimSpace(recorder.Body.Bytes())
	if len(body) == 0 {
		return out
	}
	if !json.Valid(body) {
		return answer{ID: req.ID, Error: fmt.Sprintf("Kruise's conversion webhook answered something that is not JSON: %q", body)}
	}
	out.Result = body
	return out
}

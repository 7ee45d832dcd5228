package fees

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// A facilitator that writes absent optional members as JSON null: its success is a success and its verdict a
// verdict, not an unknown outcome (which would withhold paid work) or an outage (which would fail every call).
func TestFacilitatorAnswersWithNullMembers(t *testing.T) {
	fac := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/verify":
			w.Write([]byte(`{"isValid":true,"invalidReason":null,"invalidMessage":null,"payer":"0xf9A721373C534a2d7dbAad7b5bDF25BED26B51c1"}`))
		case "/settle":
			w.Write([]byte(`{"success":true,"errorReason":null,"errorMessage":null,"payer":"0xf9A721373C534a2d7dbAad7b5bDF25BED26B51c1","transaction":"0xabc","network":"eip155:84532","extensions":null}`))
		}
	}))
	defer fac.Close()
	f := NewFacilitator(fac.URL, nil, time.Second, time.Second)
	v, err := f.Verify(context.Background(), FacilitatorRequest{X402Version: 2})
	if err != nil || !v.IsValid || v.InvalidReason != "" {
		t.Fatalf("verify = %+v, %v", v, err)
	}
	s, err := f.Settle(context.Background(), FacilitatorRequest{X402Version: 2})
	if err != nil || !s.Success || s.Transaction != "0xabc" || s.ErrorReason != "" {
		t.Fatalf("settle = %+v, %v", s, err)
	}
}

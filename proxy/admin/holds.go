package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/payguard/payguard/internal/errbody"
	"github.com/payguard/payguard/proxy/view"
	"github.com/payguard/payguard/store"
)

// holdView is a hold as the API shows it: the one hold view (view.Hold, as the CLI, the console and the
// webhooks show it) with the held decision's JSON.
func (h *handler) holdView(s store.Hold) view.Hold {
	return view.HoldOf(s, h.o.Now()).WithDecision(s)
}

// listHolds is GET /v1/holds?status=: every hold ("" or "all"), or those whose status as shown is status.
// The filter applies to the status a person sees (view.HoldOf): a pending hold past its expiry is listed
// under expired, not pending, whatever the store still says.
func (h *handler) listHolds(w http.ResponseWriter, r *http.Request) {
	status := r.URL.Query().Get("status")
	switch status {
	case "", "all", store.HoldPending, store.HoldApproved, store.HoldDenied, store.HoldUsed, store.HoldExpired:
	default:
		writeJSON(w, http.StatusBadRequest, apiError("invalid_status",
			fmt.Sprintf("unknown status %q (pending, approved, denied, used, expired or all)", status)))
		return
	}
	hs, err := h.o.Holds.ListHolds(r.Context(), "")
	if err != nil {
		writeJSON(w, http.StatusServiceUnavailable, apiError("store_unavailable", err.Error()))
		return
	}
	out := make([]view.Hold, 0, len(hs))
	for _, s := range hs {
		if v := h.holdView(s); status == "" || status == "all" || v.Status == status {
			out = append(out, v)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"holds": out})
}

func (h *handler) getHold(w http.ResponseWriter, r *http.Request) {
	s, err := h.o.Holds.GetHold(r.Context(), r.PathValue("id"))
	if errors.Is(err, store.ErrNotFound) {
		writeJSON(w, http.StatusNotFound, apiError("not_found", "no hold with that id"))
		return
	}
	if err != nil {
		writeJSON(w, http.StatusServiceUnavailable, apiError("store_unavailable", err.Error()))
		return
	}
	writeJSON(w, http.StatusOK, h.holdView(s))
}

type resolveRequest struct {
	By   string `json:"by"`
	Note string `json:"note"`
}

func (h *handler) resolveHoldAPI(status string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var body resolveRequest
		dec := json.NewDecoder(io.LimitReader(r.Body, maxAdminBody))
		dec.DisallowUnknownFields()
		err := dec.Decode(&body)
		if err == nil && dec.Decode(&struct{}{}) != io.EOF {
			err = errors.New("more than one JSON value")
		}
		if err != nil {
			writeJSON(w, http.StatusBadRequest, apiError("invalid_json", "body must be one {\"by\": \"...\", \"note\": \"...\"}: "+err.Error()))
			return
		}
		s, rerr := h.resolve(r.Context(), r.PathValue("id"), status, body.By, body.Note)
		if rerr != nil {
			writeJSON(w, rerr.Status, rerr)
			return
		}
		writeJSON(w, http.StatusOK, h.holdView(s))
	}
}

// resolve is the one way a person approves or denies a hold, for the API and the console alike: the name
// and note are checked here, then the proxy resolves it (Core.ResolveHold: an expired hold is refused, the
// store's transition decides races, and the waiting request and the notifier are woken).
func (h *handler) resolve(ctx context.Context, id, status, by, note string) (store.Hold, *errbody.Error) {
	by = strings.TrimSpace(by)
	if !visibleName(by) || len(by) > 256 || len(note) > 2048 || !utf8.ValidString(note) {
		return store.Hold{}, errbody.New(http.StatusBadRequest, "invalid_request", "`by` is required (at most 256 bytes of valid UTF-8, visible characters, no control or format characters), `note` at most 2048 bytes of valid UTF-8")
	}
	s, err := h.core.ResolveHold(ctx, id, status, by, note)
	switch {
	case err == nil:
		return s, nil
	case errors.Is(err, store.ErrNotFound):
		return store.Hold{}, errbody.New(http.StatusNotFound, "not_found", "no hold with that id")
	case errors.Is(err, view.ErrHoldExpired):
		return store.Hold{}, errbody.New(http.StatusConflict, "expired", "the hold has expired")
	case errors.Is(err, store.ErrConflict):
		return store.Hold{}, errbody.New(http.StatusConflict, "conflict", "the hold is no longer pending")
	default:
		return store.Hold{}, errbody.New(http.StatusServiceUnavailable, "store_unavailable", err.Error())
	}
}

// visibleName reports whether s can name the person who resolved a hold in the audit record: valid UTF-8
// with at least one visible character, and no control or format characters (NUL, U+200B, U+FEFF...) that
// would make the name empty or misleading on screen.
func visibleName(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	visible := false
	for _, r := range s {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return false
		}
		if unicode.IsGraphic(r) && !unicode.IsSpace(r) {
			visible = true
		}
	}
	return visible
}

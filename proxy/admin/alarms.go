package admin

import (
	"errors"
	"net/http"

	"github.com/payguard/payguard/store"
)

// listAlarms answers GET /v1/alarms: the sellers whose payments are held by a settlement alarm.
func (h *handler) listAlarms(w http.ResponseWriter, r *http.Request) {
	list, err := h.core.Alarms(r.Context())
	if err != nil {
		writeJSON(w, http.StatusServiceUnavailable, apiError("store_unavailable", err.Error()))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"alarms": list})
}

// clearAlarm answers DELETE /v1/alarms/{host}: an operator who has looked into the seller lets its payments
// be decided by the rules again. The host (any name of the site, or the site as GET lists it) is read as
// the alarm is keyed (Core.ClearAlarm).
func (h *handler) clearAlarm(w http.ResponseWriter, r *http.Request) {
	site, err := h.core.ClearAlarm(r.Context(), r.PathValue("host"))
	switch {
	case errors.Is(err, store.ErrNotFound):
		writeJSON(w, http.StatusNotFound, apiError("not_found", "no settlement alarm on that host"))
		return
	case err != nil:
		writeJSON(w, http.StatusServiceUnavailable, apiError("store_unavailable", err.Error()))
		return
	}
	h.log.Info("settlement alarm cleared", "host", site)
	writeJSON(w, http.StatusOK, map[string]string{"cleared": site})
}

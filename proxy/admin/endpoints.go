package admin

import (
	"net/http"
	"sort"
	"strings"

	"github.com/payguard/payguard/index"
	"github.com/payguard/payguard/store"
)

// maxAdminObservations bounds the raw observations GET /v1/endpoints lists (the newest).
const maxAdminObservations = 200

// endpointsView is GET /v1/endpoints?url=: what the Index holds about one endpoint, for operators.
type endpointsView struct {
	URL          string                   `json:"url"`
	Summary      index.Summary            `json:"summary"`      // every method together
	ByMethod     map[string]index.Summary `json:"by_method"`    // each method alone
	Observations []store.Observation      `json:"observations"` // the newest, oldest first
}

// endpoints is the read-only Index lookup of the admin API.
func (h *handler) endpoints(w http.ResponseWriter, r *http.Request) {
	if h.o.Index == nil {
		writeJSON(w, http.StatusServiceUnavailable, apiError("index_unavailable", "this proxy has no Endpoint Index configured"))
		return
	}
	u, err := index.NormalizeURL(r.URL.Query().Get("url"))
	if err != nil {
		writeJSON(w, http.StatusBadRequest, apiError("invalid_url", "url must be an absolute http or https URL"))
		return
	}
	obs, err := h.o.Index.Observations(r.Context(), u)
	if err != nil {
		writeJSON(w, http.StatusServiceUnavailable, apiError("index_unavailable", "the Index could not be read: "+err.Error()))
		return
	}
	now := h.o.Now()
	v := endpointsView{URL: u, Summary: index.Derive(u, obs, "", now, h.o.IndexMaxAge), ByMethod: map[string]index.Summary{},
		Observations: []store.Observation{}}
	if v.Summary.Observations == 0 {
		writeJSON(w, http.StatusNotFound, apiError("endpoint_not_listed", "the Index has no observation of "+u))
		return
	}
	methods := map[string]bool{}
	for _, o := range obs {
		methods[strings.ToUpper(o.Method)] = true
	}
	for m := range methods {
		v.ByMethod[m] = index.Derive(u, obs, m, now, h.o.IndexMaxAge)
	}
	sort.SliceStable(obs, func(i, j int) bool { return obs[i].ObservedAt.Before(obs[j].ObservedAt) })
	if len(obs) > maxAdminObservations {
		obs = obs[len(obs)-maxAdminObservations:]
	}
	v.Observations = append(v.Observations, obs...)
	writeJSON(w, http.StatusOK, v)
}

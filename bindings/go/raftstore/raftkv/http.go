// http.go -- the HTTP API: GET, PUT, DELETE /kv/{key}, POST /cas/{key},
// POST /join, POST /remove, GET /status.  Requests reaching a follower are
// forwarded to the leader.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/hashicorp/raft"
)

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

// forwardedHeader marks a request a follower forwarded: the node
// receiving it answers or refuses, it never forwards again.
const forwardedHeader = "X-Raftkv-Forwarded"

// outcomeHeader "none" on an error reply says that the write was not
// applied and never will be; without it a failed write's outcome is
// unknown.
const outcomeHeader = "X-Raftkv-Outcome"

var forwardClient = &http.Client{Timeout: 10 * time.Second}

func (n *node) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /kv/{key}", n.leaderOnly(n.handleGet))
	mux.HandleFunc("PUT /kv/{key}", n.leaderOnly(n.handlePut))
	mux.HandleFunc("DELETE /kv/{key}", n.leaderOnly(n.handleDelete))
	mux.HandleFunc("POST /cas/{key}", n.leaderOnly(n.handleCAS))
	mux.HandleFunc("POST /join", n.leaderOnly(n.handleJoin))
	mux.HandleFunc("POST /remove", n.leaderOnly(n.handleRemove))
	mux.HandleFunc("GET /status", n.handleStatus)
	return mux
}

// leaderOnly runs h on the leader and forwards the request to the leader
// from a follower (once: a forwarded request reaching a non-leader is
// refused with 503).  With -unsafe-local-reads every node serves GET
// itself.
func (n *node) leaderOnly(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if n.raft.State() == raft.Leader ||
			(n.cfg.unsafeLocalReads && r.Method == http.MethodGet) {
			h(w, r)
			return
		}
		_, id := n.raft.LeaderWithID()
		addr, ok := n.httpAddrOf(string(id))
		if id == "" || !ok || r.Header.Get(forwardedHeader) != "" {
			w.Header().Set(outcomeHeader, "none")
			http.Error(w, "no leader known", http.StatusServiceUnavailable)
			return
		}
		n.forward(w, r, addr)
	}
}

func (n *node) forward(w http.ResponseWriter, r *http.Request, addr string) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req, err := http.NewRequestWithContext(r.Context(), r.Method,
		"http://"+addr+r.URL.RequestURI(), bytesReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	req.Header.Set(forwardedHeader, n.cfg.id)
	resp, err := forwardClient.Do(req)
	if err != nil {
		// outcome unknown: the leader may have received it
		http.Error(w, "forwarding: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	io.Copy(w, resp.Body)
}

// handleGet is a linearizable read: a barrier (an entry committed by a
// quorum in this leader's term and applied here) before reading the local
// state, so the read sees every write acknowledged before it began.
func (n *node) handleGet(w http.ResponseWriter, r *http.Request) {
	if !n.cfg.unsafeLocalReads {
		if err := n.raft.Barrier(5 * time.Second).Error(); err != nil {
			http.Error(w, "read barrier: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
	}
	v, ok, err := n.fsm.get(r.PathValue("key"))
	switch {
	case err != nil:
		http.Error(w, err.Error(), http.StatusInternalServerError)
	case !ok:
		http.Error(w, "absent", http.StatusNotFound)
	default:
		io.WriteString(w, v)
	}
}

func (n *node) handlePut(w http.ResponseWriter, r *http.Request) {
	v, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	n.write(w, command{Op: "put", Key: r.PathValue("key"), Value: string(v)})
}

func (n *node) handleDelete(w http.ResponseWriter, r *http.Request) {
	n.write(w, command{Op: "delete", Key: r.PathValue("key")})
}

// handleCAS: POST /cas/{key}?expect=V (or ?absent=1) with the new value
// as body; 200 when swapped, 409 when the current value differs.
func (n *node) handleCAS(w http.ResponseWriter, r *http.Request) {
	v, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	q := r.URL.Query()
	c := command{Op: "cas", Key: r.PathValue("key"), Value: string(v),
		Expect: q.Get("expect"), ExpectAbsent: q.Get("absent") == "1"}
	if !c.ExpectAbsent && !q.Has("expect") {
		http.Error(w, "cas needs ?expect=VALUE or ?absent=1", http.StatusBadRequest)
		return
	}
	n.write(w, c)
}

func (n *node) write(w http.ResponseWriter, c command) {
	res, err := n.apply(c)
	switch {
	case errors.Is(err, errNotApplied):
		w.Header().Set(outcomeHeader, "none")
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
	case err != nil:
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
	case c.Op == "cas" && !res.Swapped:
		http.Error(w, "compare failed", http.StatusConflict)
	case c.Op == "cas":
		w.WriteHeader(http.StatusOK)
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

// handleJoin: POST /join?id=ID&raft=ADDR&http=ADDR adds a voter.
func (n *node) handleJoin(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	id, raftAddr, httpAddr := q.Get("id"), q.Get("raft"), q.Get("http")
	if id == "" || raftAddr == "" || httpAddr == "" {
		http.Error(w, "join needs id, raft and http", http.StatusBadRequest)
		return
	}
	if _, err := n.apply(command{Op: "addr", Key: id, Value: httpAddr}); err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	f := n.raft.AddVoter(raft.ServerID(id), raft.ServerAddress(raftAddr), 0, 10*time.Second)
	if err := f.Error(); err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	fmt.Fprintf(w, "added %s at %s\n", id, raftAddr)
}

// handleRemove: POST /remove?id=ID removes a server from the cluster.
func (n *node) handleRemove(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("id")
	if err := n.raft.RemoveServer(raft.ServerID(id), 0, 10*time.Second).Error(); err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	fmt.Fprintf(w, "removed %s\n", id)
}

// handleStatus reports this node's view (not linearizable: for operators).
func (n *node) handleStatus(w http.ResponseWriter, r *http.Request) {
	leaderAddr, leaderID := n.raft.LeaderWithID()
	var servers []string
	if f := n.raft.GetConfiguration(); f.Error() == nil {
		for _, s := range f.Configuration().Servers {
			servers = append(servers, string(s.ID))
		}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": n.cfg.id, "state": n.raft.State().String(),
		"leader": string(leaderID), "leader_raft": string(leaderAddr),
		"applied": n.fsm.applied.Load(), "snapshot_restores": n.fsm.restores.Load(),
		"servers": servers,
	})
}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

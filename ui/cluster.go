package ui

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sluicehq/sluice/cluster"
)

// Cluster is what GET /api/cluster asks; *cluster.Client implements it.
type Cluster interface {
	Brokers(ctx context.Context) ([]cluster.BrokerInfo, error)
	Workers(ctx context.Context) ([]cluster.WorkerInfo, error)
}

// ClusterJSON is the answer of GET /api/cluster: the broker tree (each
// broker with its parent) and the workers with their devices and limits;
// Broker is false (and the lists empty) when the server has no broker.
type ClusterJSON struct {
	Broker  bool                 `json:"broker"`
	Brokers []cluster.BrokerInfo `json:"brokers"`
	Workers []cluster.WorkerInfo `json:"workers"`
}

// clusterTimeout bounds one GET /api/cluster.
const clusterTimeout = 5 * time.Second

func (s *Server) getCluster(w http.ResponseWriter, r *http.Request) {
	if s.Cluster == nil { // not an error: the page asks in every case
		writeJSON(w, http.StatusOK, ClusterJSON{Brokers: []cluster.BrokerInfo{}, Workers: []cluster.WorkerInfo{}})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), clusterTimeout)
	defer cancel()
	out := ClusterJSON{Broker: true}
	var err error
	if out.Brokers, err = s.Cluster.Brokers(ctx); err == nil {
		out.Workers, err = s.Cluster.Workers(ctx)
		if errors.Is(err, nats.ErrNoResponders) { // a tree without workers
			out.Workers, err = []cluster.WorkerInfo{}, nil
		}
	}
	if err != nil {
		writeErr(w, http.StatusBadGateway, "asking the broker: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, out)
}

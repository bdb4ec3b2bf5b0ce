// The cluster that etcd's recipe integration tests (Debian's golang-etcd-server-dev,
// go.etcd.io/etcd/integration: v3_stm, v3_election, v3_lock, v3_barrier,
// v3_double_barrier and v3_queue _test.go) build with NewClusterV3, served here by a
// running server instead of embedded etcd members: every member is one endpoint of
// ETCD_RECIPES_ENDPOINTS (host:port, comma separated), reused in turn when the test asks
// for more members than there are endpoints. Only the symbols those six files use are
// defined. The tests assume an empty cluster with a fresh history (TestMutexWaitsOnCurrentHolder
// watches from revision 1), so each is run alone against a fresh server: EtcdRecipes
// (Sources/DiscfgTestSupport) copies the files beside this one, compiles them once and
// runs them for Tests/CLITests/EtcdRecipeTests.swift.
package integration

import (
	"fmt"
	"math/rand"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.etcd.io/etcd/clientv3"
	"google.golang.org/grpc"
)

// ClusterConfig is the shape of the cluster a test asks for.
type ClusterConfig struct {
	// Size is the number of members, each with its own client.
	Size int
}

// member is one endpoint standing in for a cluster member.
type member struct {
	grpcAddr string
}

// cluster is the set of members; tests pick from Members for their own clients.
type cluster struct {
	Members []*member
}

// ClusterV3 is a cluster with one client per member.
type ClusterV3 struct {
	*cluster

	mu      sync.Mutex
	clients []*clientv3.Client
}

// endpoints reads ETCD_RECIPES_ENDPOINTS.
func endpoints() ([]string, error) {
	var list []string
	for _, e := range strings.Split(os.Getenv("ETCD_RECIPES_ENDPOINTS"), ",") {
		if e = strings.TrimSpace(e); e != "" {
			list = append(list, e)
		}
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("ETCD_RECIPES_ENDPOINTS names no endpoint (host:port, comma separated)")
	}
	return list, nil
}

// NewClusterV3 returns a cluster of cfg.Size members over the endpoints, with a
// connected client for each.
func NewClusterV3(t testing.TB, cfg *ClusterConfig) *ClusterV3 {
	list, err := endpoints()
	if err != nil {
		t.Fatal(err)
	}
	clus := &ClusterV3{cluster: &cluster{}}
	for i := 0; i < cfg.Size; i++ {
		m := &member{grpcAddr: list[i%len(list)]}
		clus.Members = append(clus.Members, m)
		cli, err := NewClientV3(m)
		if err != nil {
			clus.Terminate(t)
			t.Fatalf("cannot connect to %s: %v", m.grpcAddr, err)
		}
		clus.clients = append(clus.clients, cli)
	}
	return clus
}

// NewClientV3 connects a new client to the member, as etcd's harness does: blocking
// dial, five seconds to connect.
func NewClientV3(m *member) (*clientv3.Client, error) {
	return clientv3.New(clientv3.Config{
		Endpoints:   []string{m.grpcAddr},
		DialTimeout: 5 * time.Second,
		DialOptions: []grpc.DialOption{grpc.WithBlock()},
	})
}

// Terminate closes the cluster's clients; the server outlives it.
func (c *ClusterV3) Terminate(t testing.TB) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cli := range c.clients {
		if err := cli.Close(); err != nil && t != nil {
			t.Error(err)
		}
	}
	c.clients = nil
}

// RandClient returns the client of a random member.
func (c *ClusterV3) RandClient() *clientv3.Client {
	return c.clients[rand.Intn(len(c.clients))]
}

// Client returns member i's client.
func (c *ClusterV3) Client(i int) *clientv3.Client {
	return c.clients[i]
}

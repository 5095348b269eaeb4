package models

import (
	"fmt"
	"strconv"
	"strings"
)

// Cluster is a set of servers of one GPU type, possibly of different sizes.
// The simulator models GPUs of one type per run, so groups of different
// types are refused by ParseCluster.
type Cluster struct {
	Type GPUType
	// Servers holds each server's GPU count, servers numbered in order.
	Servers []int
}

// maxClusterGPUs bounds a cluster's total GPUs.
const maxClusterGPUs = 1 << 16

// ParseCluster parses "TYPE:GPUSxSERVERS[,TYPE:GPUSxSERVERS...]", e.g.
// "a100-40gb:8x16" (16 servers of 8 GPUs). Several groups must name the
// same GPU type: the simulator runs GPUs of one type.
func ParseCluster(s string) (Cluster, error) {
	if strings.TrimSpace(s) == "" {
		return Cluster{}, fmt.Errorf("cluster %q: want TYPE:GPUSxSERVERS, e.g. a100-40gb:8x16", s)
	}
	var c Cluster
	total := 0
	for _, g := range strings.Split(s, ",") {
		i := strings.LastIndex(g, ":")
		if i < 0 {
			return Cluster{}, fmt.Errorf("cluster group %q: want TYPE:GPUSxSERVERS, e.g. a100-40gb:8x16", g)
		}
		name, size := g[:i], g[i+1:]
		t, err := ResolveGPUType(name)
		if err != nil {
			return Cluster{}, fmt.Errorf("cluster group %q: %w", g, err)
		}
		gs, ns, ok := strings.Cut(size, "x")
		if !ok {
			return Cluster{}, fmt.Errorf("cluster group %q: size %q: want GPUSxSERVERS, e.g. 8x16", g, size)
		}
		gpus, err1 := strconv.Atoi(gs)
		n, err2 := strconv.Atoi(ns)
		switch {
		case err1 != nil || gpus < 1 || gpus > 1024 || strconv.Itoa(gpus) != gs:
			return Cluster{}, fmt.Errorf("cluster group %q: GPUs per server %q is not a whole number in 1..1024", g, gs)
		case err2 != nil || n < 1 || n > 1<<14 || strconv.Itoa(n) != ns:
			return Cluster{}, fmt.Errorf("cluster group %q: server count %q is not a whole number in 1..16384", g, ns)
		}
		if c.Servers != nil && t.Name != c.Type.Name {
			return Cluster{}, fmt.Errorf("cluster %q: groups of GPU types %s and %s: the simulator runs GPUs of one type per run (one catalog, interference and telemetry model), so a cluster's groups must share it", s, c.Type.Name, t.Name)
		}
		c.Type = t
		if total += gpus * n; total > maxClusterGPUs {
			return Cluster{}, fmt.Errorf("cluster %q: more than %d GPUs", s, maxClusterGPUs)
		}
		for range n {
			c.Servers = append(c.Servers, gpus)
		}
	}
	return c, nil
}

// GPUs is the cluster's total GPU count.
func (c Cluster) GPUs() int {
	n := 0
	for _, g := range c.Servers {
		n += g
	}
	return n
}

// MaxServerGPUs is the GPU count of the cluster's largest server.
func (c Cluster) MaxServerGPUs() int {
	m := 0
	for _, g := range c.Servers {
		m = max(m, g)
	}
	return m
}

// Server is the whole cluster as one server: its GPUs, of its type, in
// server order (server 0's GPUs first).
func (c Cluster) Server() Server { return Server{Type: c.Type, GPUs: c.GPUs()} }

// String gives the cluster in ParseCluster's syntax, runs of equal servers
// as one group.
func (c Cluster) String() string {
	var parts []string
	for i := 0; i < len(c.Servers); {
		j := i
		for j < len(c.Servers) && c.Servers[j] == c.Servers[i] {
			j++
		}
		parts = append(parts, fmt.Sprintf("%s:%dx%d", c.Type.Name, c.Servers[i], j-i))
		i = j
	}
	return strings.Join(parts, ",")
}

package models

import (
	"fmt"
	"strconv"
	"strings"
)

// Cluster is a set of servers, each of one GPU type, possibly of different
// sizes and types.
type Cluster struct {
	// Type is the first server's GPU type: every server's in a cluster of
	// one type.
	Type GPUType
	// Servers holds each server's GPU count, servers numbered in order.
	Servers []int
	// Types holds the cluster's GPU types in order of first appearance
	// (Types[0] is Type) and ServerType each server's index into it.
	Types      []GPUType
	ServerType []int
}

// maxClusterGPUs bounds a cluster's total GPUs.
const maxClusterGPUs = 1 << 16

// maxClusterTypes bounds the GPU types of one cluster.
const maxClusterTypes = 8

// ParseCluster parses "TYPE:GPUSxSERVERS[,TYPE:GPUSxSERVERS...]", e.g.
// "a100-40gb:8x16" (16 servers of 8 GPUs) or
// "a100-40gb:8x8,h200-141gb:8x4" (eight A100 servers, then four H200
// ones). TYPE is a built-in GPU type or a GPU type YAML file; a cluster has
// at most maxClusterTypes types.
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
			return Cluster{}, fmt.Errorf("cluster group %q: GPU type: %w", g, err)
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
		k := -1
		for x, u := range c.Types {
			if u.Name == t.Name {
				if u != t {
					return Cluster{}, fmt.Errorf("cluster group %q: GPU type %s: another group names a different type of that name", g, t.Name)
				}
				k = x
			}
		}
		if k < 0 {
			if len(c.Types) == maxClusterTypes {
				return Cluster{}, fmt.Errorf("cluster %q: more than %d GPU types", s, maxClusterTypes)
			}
			k = len(c.Types)
			c.Types = append(c.Types, t)
		}
		if total += gpus * n; total > maxClusterGPUs {
			return Cluster{}, fmt.Errorf("cluster %q: more than %d GPUs", s, maxClusterGPUs)
		}
		for range n {
			c.Servers = append(c.Servers, gpus)
			c.ServerType = append(c.ServerType, k)
		}
	}
	c.Type = c.Types[0]
	return c, nil
}

// Mixed reports whether the cluster has GPUs of more than one type.
func (c Cluster) Mixed() bool { return len(c.Types) > 1 }

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

// GPUTypes returns the type index (into Types) of each of the cluster's
// GPUs, in server order.
func (c Cluster) GPUTypes() []int {
	of := make([]int, 0, c.GPUs())
	for i, n := range c.Servers {
		for range n {
			of = append(of, c.typeOf(i))
		}
	}
	return of
}

// Slots returns each of the cluster's GPUs' index within its server, in
// server order.
func (c Cluster) Slots() []int {
	of := make([]int, 0, c.GPUs())
	for _, n := range c.Servers {
		for k := range n {
			of = append(of, k)
		}
	}
	return of
}

// typeOf is server i's index into Types (0 for a cluster built without
// ServerType).
func (c Cluster) typeOf(i int) int {
	if i < len(c.ServerType) {
		return c.ServerType[i]
	}
	return 0
}

// Server is the whole cluster as one server: its GPUs in server order
// (server 0's GPUs first), of its first type (see Types for the others).
func (c Cluster) Server() Server { return Server{Type: c.Type, GPUs: c.GPUs()} }

// String gives the cluster in ParseCluster's syntax, runs of equal servers
// as one group.
func (c Cluster) String() string {
	var parts []string
	for i := 0; i < len(c.Servers); {
		j := i
		for j < len(c.Servers) && c.Servers[j] == c.Servers[i] && c.typeOf(j) == c.typeOf(i) {
			j++
		}
		name := c.Type.Name
		if k := c.typeOf(i); k < len(c.Types) {
			name = c.Types[k].Name
		}
		parts = append(parts, fmt.Sprintf("%s:%dx%d", name, c.Servers[i], j-i))
		i = j
	}
	return strings.Join(parts, ",")
}

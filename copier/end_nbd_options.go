package copier

import "time"

// NBDOptions tune the NBD ends of a copy.
type NBDOptions struct {
	// Connections is how many connections an export is reached over
	// when its server advertises CAN_MULTI_CONN (one otherwise); 0 is
	// DefaultNBDConnections.
	Connections int
	// Timeout bounds how long a server may take to answer while requests
	// are in flight, and to connect and negotiate; 0 is the nbd package's
	// default (5 minutes for answers: a FLUSH of a large cache on slow
	// storage takes long; 30 s to connect).
	Timeout time.Duration
}

// DefaultNBDConnections: nbdcopy's default too. Four connections keep a
// multi-threaded server (nbdkit, qemu-storage-daemon) busy and spread a
// long network path over four TCP windows.
const DefaultNBDConnections = 4

// MaxNBDConnections bounds NBDOptions.Connections.
const MaxNBDConnections = 64

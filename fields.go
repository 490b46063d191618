package main

import (
	"maps"
	"slices"
	"strings"
)

// The library speaks of Options fields ("Options.SrcOffset 5 is past the
// end"); the command speaks of its flags. fieldFlags maps each field a
// flag sets to that flag, for messages and for "flag" in --json.
var fieldFlags = map[string]string{
	"SrcOffset": "--src-offset", "DstOffset": "--dst-offset", "Length": "--length",
	"BlockSize": "--block-size", "QueueDepth": "--queue-depth", "Engine": "--engine",
	"Direct": "--direct", "NoSync": "--sync none", "Sparse": "--sparse", "ZeroBlock": "--zero-block",
	"TargetIsZero": "--target-is-zero", "Offload": "--offload", "Force": "--force", "SrcFormat": "--src-format",
	"Verify": "--verify", "Checksum": "--checksum", "Resume": "--resume", "StatePath": "--state", "SyncEvery": "--sync-every",
	"NBD.Connections": "--nbd-connections", "NBD.Timeout": "--nbd-timeout",
	"MaxRate": "--max-rate", "IOPrio": "--ioprio", "Yield": "--yield",
	"DstFormat": "--dst-format", "Qcow2.ClusterSize": "--cluster-size", "Qcow2.Compress": "--compress",
	"Qcow2.Backing": "--backing", "Qcow2.BackingFormat": "--backing-format", "Qcow2.Preallocation": "--preallocation",
}

// flagWords rewrites "Options.Field" in the library's words to the flag.
var flagWords = fieldReplacer(fieldFlags)

// fieldReplacer tries longer field names first, so that no field's name
// is taken for the start of another's.
func fieldReplacer(flags map[string]string) *strings.Replacer {
	fields := slices.Collect(maps.Keys(flags))
	slices.SortFunc(fields, func(a, b string) int { return len(b) - len(a) })
	var pairs []string
	for _, field := range fields {
		pairs = append(pairs, "Options."+field, flags[field])
	}
	return strings.NewReplacer(pairs...)
}

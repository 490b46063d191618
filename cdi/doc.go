// Package cdi is the contract of KubeVirt CDI's importer pod, as CDI's
// controller sets it up and reads it back, for `ringcp cdi-importer`: the
// environment (Parse), the volume and its size (ProbeVolume, TargetSize),
// the progress endpoint (StartMetrics), the termination message
// (WriteOutcome), the paths a test or another platform moves (Paths), and
// what the copy is to do (Config.Transfer). It belongs to the command:
// copier never imports it, and it never imports copier (Transfer's fields
// are in the vocabulary of ringcp's flags).
//
// # The pod CDI's controller makes
//
// One container named "importer", the importer image's entrypoint run with
// the one argument "-v=N" (klog's verbosity), restartPolicy OnFailure,
// running as UID 107 with every capability dropped, seccomp
// RuntimeDefault, no privilege escalation, fsGroup 107 when a volume is
// mounted. The target PVC is a filesystem at /data (the image goes to
// /data/disk.img) or, for volumeMode Block, a device at
// /dev/cdi-block-volume; /scratch is a second PVC only when the
// controller decided one was needed. /certs holds the endpoint's CA
// ConfigMap (IMPORTER_CERT_DIR=/certs), /proxycerts/ the cluster proxy's
// CA (IMPORTER_PROXY_CERT_DIR), /extraheaders/N/ secrets of extra HTTP
// headers. Port 8443 is declared as "metrics"; the controller scrapes
// https://POD_IP:8443/metrics (any certificate accepted) for
// kubevirt_cdi_import_progress_total{ownerUID="OWNER_UID"} with the
// regular expression
//
//	(METRIC)\{ownerUID\="UID"\} (\d{1,3}\.?\d*)
//
// (METRIC is kubevirt_cdi_import_progress_total, for DataVolumes
// alternated with the clone progress metric; UID Go-quoted), takes the
// last group of the first match and shows it as "NN.NN%".
//
// # The result
//
// The kubelet reads at most the last 4096 bytes of /dev/termination-log
// (terminationMessagePolicy FallbackToLogsOnError: an empty file on a
// failure shows the log's tail). After exit 0 the controller decodes it
// as JSON (scratchSpaceRequired, preallocationApplied, deadlinePassed,
// vddkInfo, labels, message; unknown fields ignored), shows message as
// the DataVolume's Running condition, and treats a message containing
// "checksum mismatch" as a fatal, not retried, failure. After a non-zero
// exit the file is plain text shown as it is, except that one containing
// "is larger than the reported available", "no space left on device" or
// "disk quota exceeded" is shown as "DataVolume too small to contain
// image". CDI's importer writes "Import Complete" on success and
// "Unable to process data: ERROR" (on one line) on failure.
//
// # What ringcp serves
//
// IMPORTER_SOURCE http and s3 (an image copied straight onto the volume,
// never staged in /scratch) and none (a blank disk), content type
// kubevirt; content type archive from http and s3 (a tar, maybe
// compressed, extracted into the filesystem volume; refused on a block
// volume, where CDI's importer fails too, and for a blank disk, in CDI's
// words). Registry, imageio, vddk, gcs and glance sources and registry
// node pulls are refused with a termination message that says so. CDI's importer image is also the image of its
// DataImportCron poller, PVC-clone size detection and registry node pull
// init containers, which run CDI's own binaries: see the README's In Kubernetes.
package cdi

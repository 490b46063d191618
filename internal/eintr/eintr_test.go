package eintr

import (
	"errors"
	"syscall"
	"testing"
)

func TestRetry(t *testing.T) {
	calls := 0
	n, err := Retry(func() (int, error) {
		calls++
		if calls < 3 {
			return 0, syscall.EINTR
		}
		return 7, nil
	})
	if n != 7 || err != nil || calls != 3 {
		t.Fatalf("got %d, %v after %d calls: want 7, nil after 3", n, err, calls)
	}
	calls = 0
	err = RetryErr(func() error { calls++; return syscall.EIO })
	if !errors.Is(err, syscall.EIO) || calls != 1 {
		t.Fatalf("EIO: %v after %d calls, want EIO after 1", err, calls)
	}
}

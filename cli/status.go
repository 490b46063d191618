package cli

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/ringcp/ringcp/copier"
)

// statusRequests delivers SIGUSR1, a request for one status line on
// stderr while the copy goes on (as GNU dd answers it). main.go sets it up
// (TakeStatusRequests) before anything else, because SIGUSR1's default
// action ends the process; tests that call Run in-process leave it nil.
var statusRequests <-chan os.Signal

// TakeStatusRequests catches SIGUSR1 from now on, for the copies Run
// starts to answer with a status line.
func TakeStatusRequests() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGUSR1)
	statusRequests = ch
}

// answerStatus prints line() on w for every SIGUSR1 until the returned
// function is called. Each answer is one Write: *os.File serialises
// writes, so an answer never lands inside a progress line's redraw; when
// such a line is drawn on w, prefix moves off it first.
func answerStatus(w io.Writer, prefix string, line func() string) (stop func()) {
	if statusRequests == nil {
		return func() {}
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-quit:
				return
			case <-statusRequests:
				io.WriteString(w, prefix+line()+"\n")
			}
		}
	}()
	return func() {
		close(quit)
		<-done
	}
}

// statusLine is the copy command's answer: the progress line's words.
func statusLine(plan *copier.Plan) func() string {
	return func() string { return fmt.Sprintf("ringcp: %s", humanLine(plan.Status())) }
}

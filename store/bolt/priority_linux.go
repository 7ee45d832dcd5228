package bolt

import (
	"runtime"
	"syscall"
)

// applierNice is the niceness of the applier's thread: its commits (bbolt's page writes, the kernel's
// fdatasync work) yield the CPU to the threads answering requests on a busy machine.
const applierNice = 10

// lowerApplierPriority pins the calling goroutine to its thread and lowers that thread's priority. Linux
// applies setpriority to a single thread when given its id. A failure leaves the default priority.
func lowerApplierPriority() {
	runtime.LockOSThread()
	_ = syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), applierNice)
}

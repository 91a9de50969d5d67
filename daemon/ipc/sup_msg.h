/*
 * sup_msg.h: the lifeline: the fixed messages a sandbox's supervisor sends
 * the frontend on its run's SOCK_SEQPACKET socketpair.
 *
 * A message is one packet of exactly sizeof(struct sup_msg) (anything else
 * is a protocol violation); fds cross with SCM_RIGHTS. The supervisor
 * shares its sandbox with the untrusted code, so the frontend checks what
 * it reads (run_io.c): a malformed message ends that run, never the daemon.
 */
#ifndef AIRLOCKD_SUP_MSG_H
#define AIRLOCKD_SUP_MSG_H

#include <stdint.h>

/* supervisor -> frontend, on the run's lifeline socket */
enum sup_msg_type {
	SUP_SETUP_FAILED = 1, /* set-up or exec failed: step and -errno */
	SUP_ARTIFACT = 2,     /* one candidate artifact, its fd attached */
	SUP_EXIT = 3,	      /* the code finished; always the last message */
	/* network = proxy: the listening socket at 127.0.0.1:port in the run's
	 * network namespace, attached; before the code starts (sandbox_egress.c) */
	SUP_EGRESS = 8,
	SUP_TOOLS = 9, /* the tool bridge's listening socket attached (before the code starts) */
	/* An interpreter session's sandbox (PLAN_F_CELLS, cells_msg.h): the
	 * frontend's end of the driver's channel attached, before the code
	 * starts; and a cell's end, after CELLS_SUP_FINISH: reason (the limit
	 * that interrupted it, or EXITED), cpu_ns, wall_ns, size = the cell,
	 * memory_peak.
	 * SUP_CELL_LOST: the interpreter ended during cell `size`; the same
	 * fields, the cell's own from its CELLS_SUP_BEGIN (the SUP_EXIT that
	 * follows has the interpreter's whole life). */
	SUP_CELLS = 12,
	SUP_CELL_END = 13,
	SUP_CELL_LOST = 14,
	/* A background session's processes (PLAN_F_BACKGROUND, after
	 * CELLS_SUP_PS): one SUP_PROC each (size = pid in the sandbox, name =
	 * comm, cpu_ns = utime + stime, memory_peak = resident bytes), at most
	 * SUP_PROCS_MAX, then SUP_PROCS_END (size = how many there were, more
	 * than were sent when over the bound). After CELLS_SUP_STOP:
	 * SUP_PROC_STOPPED (size = the pid, err = 0 or -errno). */
	SUP_PROC = 15,
	SUP_PROCS_END = 16,
	SUP_PROC_STOPPED = 17,
	/* A python run's figure (docs/design-interpreters.md, "figures of a
	 * plain run"), its fd attached, before the artifacts: name = its file
	 * name in SUP_DISPLAY_DIR (the code's: NNN.png or NNN.svg, checked by
	 * the frontend), size = its size; at most PROTO_DISPLAY_MAX. */
	SUP_DISPLAY = 18,
};

/* Where a python run's start-up (cells/runboot.py) leaves its figures. */
#define SUP_DISPLAY_DIR "/tmp/.airlock-display"

#define SUP_PROCS_MAX 64 /* = PROTO_PROCESSES_MAX */

enum sup_reason {
	SUP_REASON_EXITED = 0, /* the code's main process ended by itself */
	SUP_REASON_WALL = 1,   /* the supervisor's wall clock fired */
	SUP_REASON_CPU = 2,    /* the run's total cpu time passed the limit */
	SUP_REASON_PROCS = 3,  /* cgroup2: a fork or thread was refused at pids.max */
};

/*
 * SUP_EXIT's step field: who ran the code of a SPAWN_F_ZYGOTE_RUN run
 * (docs/design-bursts.md §3.5). FELL_BACK: the order could not be sent or
 * the code never reported entering; the supervisor ran it the ordinary
 * way, and err is why (-EAGAIN, -EPIPE: the order; -ETIMEDOUT, -ECHILD,
 * -EPROTO or the failed step's -errno: the report). The frontend counts
 * these to back the zygote off. 0 for every other run.
 */
enum sup_zygote {
	SUP_ZYGOTE_NONE = 0,	  /* not a zygote run */
	SUP_ZYGOTE_RAN = 1,	  /* the zygote's child ran the code */
	SUP_ZYGOTE_FELL_BACK = 2, /* the supervisor ran it the ordinary way */
};

#define SUP_NAME_MAX 255

struct sup_msg {
	uint32_t type;
	int32_t step;	 /* SETUP_FAILED: enum sandbox_step; EXIT: enum sup_zygote */
	int32_t err;	 /* SETUP_FAILED: -errno; EXIT with SUP_ZYGOTE_FELL_BACK: why */
	int32_t status;	 /* EXIT: wait status of the code's main process;
			  * CELL_END: 1 if the cell was sent SIGINT, else 0 */
	uint32_t reason; /* EXIT: enum sup_reason */
	uint32_t name_len;
	uint64_t cpu_ns;	     /* EXIT: cpu time of every process of the run */
	uint64_t wall_ns;	     /* EXIT: from exec to the end */
	uint64_t size;		     /* ARTIFACT: file size */
	char name[SUP_NAME_MAX + 1]; /* ARTIFACT: path relative to the workspace */
	uint64_t memory_peak;	     /* CELL_END, CELL_LOST: bytes (sandbox_cells.c:
				      * since the cell began, or since the cgroup was
				      * made where it cannot be reset); 0 = not measured */
};

#endif

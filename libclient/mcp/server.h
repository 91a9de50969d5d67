/* mcp/server.h: what the MCP server's files share (not installed). */
#ifndef AIRLOCK_MCP_SERVER_H
#define AIRLOCK_MCP_SERVER_H

#include "airlock.h"
#include "content.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define MCP_LINE_MAX (64u << 20) /* longest message accepted on stdin */
#define MCP_LINE_KEEP 512	 /* bytes of each end of an overlong line kept for its id */
#define MCP_READ_CHUNK 65536	 /* bytes read from stdin at a time */
#define MCP_SESSIONS_MAX 64	 /* sessions remembered to close at exit */
#define MCP_TICK_MS 1000	 /* progress while a run is silent */
#define MCP_NOTE_MS 200		 /* least time between progress notes with output */
#define MCP_NOTE_TEXT 1000	 /* bytes of output in one progress note */
#define MCP_TIMEOUT_MAX 86400.0	 /* largest timeout_seconds or cpu_seconds taken */
#define MCP_PARALLEL_DEFAULT 8	 /* runs in flight at once (--parallel) */
#define MCP_PARALLEL_MAX 256
#define MCP_PROBE_MS 10000    /* how long the environment probe may take */
#define MCP_CLOSE_MS 1500     /* how long closing the sessions at exit may take */
#define MCP_WATCH_MS 500      /* the parent's pid compared this often without a pidfd */
#define MCP_EOF_GRACE_MS 1500 /* calls in flight at stdin's end are answered within this */
#define MCP_EXIT_USAGE 2
#define MCP_EXIT_SOFTWARE 70

/* JSON-RPC 2.0 error codes, MCP's "not initialized" (as LSP's) and MCP's
 * "resource not found". */
enum {
	MCP_ERR_PARSE = -32700,
	MCP_ERR_INVALID = -32600,
	MCP_ERR_METHOD = -32601,
	MCP_ERR_PARAMS = -32602,
	MCP_ERR_INTERNAL = -32603,
	MCP_ERR_NOT_INITIALIZED = -32002,
	MCP_ERR_NO_RESOURCE = -32002,
};

/* One message read from stdin and not yet handled. */
struct mcp_line {
	struct mcp_line *next;
	json_t *msg; /* the parsed message, or NULL */
	char *error; /* why it did not parse, when msg is NULL */
	json_t *id;  /* for a line too long to parse: its id when one was found */
};

/* A run_python or run_shell call: waiting to be sent, or in flight. */
struct mcp_call {
	struct mcp_call *next;
	json_t *id;    /* JSON-RPC id of the tools/call (a reference) */
	json_t *token; /* _meta.progressToken (a reference), or NULL */
	const char *tool;
	struct airlock_run_req *req;
	char session[AIRLOCK_SESSION_ID_LEN + 1]; /* "" for a one-shot run */
	uint64_t wall_ms, cpu_ms, memory_bytes;	  /* asked for; 0: the daemon's default */
	uint32_t req_id;			  /* libairlock request id once sent, else 0 */
	size_t place;	  /* sent: its place in airlockd's queue (0: running); else in ours */
	bool cancelled;	  /* notifications/cancelled named it */
	json_int_t notes; /* progress notes sent */
	uint64_t start_ms, next_tick_ms, last_note_ms;
	int note_stream; /* stream of the last chunk in note, 0 for none */
	size_t note_len;
	char note[MCP_NOTE_TEXT * 2 + 32];
};

/* The server's state, from mcp_main() down. */
struct mcp {
	const char *socket;
	unsigned parallel;	    /* --parallel */
	size_t budget;		    /* --output-budget */
	const char *python_runtime; /* --python-runtime: run_python's default */
	struct airlock_conn *conn;
	struct airlock_info *info; /* of conn, for defaults and ceilings; may be NULL */
	bool initialized;
	const char *version; /* negotiated protocol version */
	char *in;	     /* stdin bytes not yet split into lines */
	size_t in_len, in_cap, in_scan;
	bool in_eof, in_skip; /* in_skip: dropping the rest of an overlong line */
	char skip_head[MCP_LINE_KEEP], skip_tail[MCP_LINE_KEEP];
	size_t skip_head_len, skip_tail_len;
	bool out_failed;  /* stdout is gone: stop */
	const char *gone; /* why the client is known gone (stop at once), or NULL */
	uint64_t eof_ms;  /* when stdin ended (clock_now_ms()), or 0 */
	pid_t ppid;	  /* the parent at start (the client), or 0: not watched */
	int parentfd;	  /* a pidfd of ppid, or -1: getppid() is compared instead */
	int sigfd;	  /* SIGTERM, SIGINT, SIGHUP */
	int stop_signal;  /* the signal that stops the server, or 0 */
	struct mcp_line *head, **tail;
	struct mcp_call *calls;	   /* in flight */
	size_t ncalls;		   /* in flight */
	struct mcp_call *waiting;  /* not sent yet, in arrival order */
	bool probed;		   /* the environment probe ran */
	char *env_python, *env_sh; /* what it found, for the tool descriptions */
	char sessions[MCP_SESSIONS_MAX][AIRLOCK_SESSION_ID_LEN + 1];
	char cell_session[AIRLOCK_SESSION_ID_LEN + 1]; /* run_python_cell's, or "" */
	char cell_runtime[64], cell_profile[64];       /* what it was opened with ("": default) */
	bool cell_background; /* reset_python's background: the next cell session's */
};

/* A tool of tools/list and tools/call (the table: tools.c). */
struct mcp_tool {
	const char *name;
	const char *title;
	const char *description;
	const char *input;
	const char *output; /* NULL: none */
	bool read_only, destructive, idempotent;
	void (*fn)(struct mcp *m, json_t *id, json_t *args, json_t *token);
};

extern const struct mcp_tool mcp_tools[];

/* server.c */
void *mcp_oom(void *p);
void mcp_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
bool mcp_since(const struct mcp *m, const char *v);
void mcp_send(struct mcp *m, json_t *msg);
void mcp_reply(struct mcp *m, json_t *id, json_t *result);
void mcp_error(struct mcp *m, json_t *id, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void mcp_tool_reply_structured(struct mcp *m, json_t *id, json_t *content, bool is_error,
			       json_t *structured);
void mcp_tool_reply(struct mcp *m, json_t *id, json_t *content, bool is_error);
void mcp_tool_fail(struct mcp *m, json_t *id, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void mcp_bad_args(struct mcp *m, json_t *id, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void mcp_disconnect(struct mcp *m);
int mcp_connect(struct mcp *m, char *buf, size_t len);
void mcp_failure(struct mcp *m, int r, char *buf, size_t len);
int mcp_tool_connect(struct mcp *m, json_t *id);
int mcp_args_known(struct mcp *m, json_t *id, const char *tool, json_t *args,
		   const char *const *allowed);
int mcp_arg_string(struct mcp *m, json_t *id, const char *tool, json_t *args, const char *key,
		   bool required, const char **ret);
int mcp_arg_session(struct mcp *m, json_t *id, const char *tool, json_t *args, bool required,
		    const char **ret);
int mcp_arg_number(struct mcp *m, json_t *id, const char *tool, json_t *args, const char *key,
		   double max, double unit, const char *what, uint64_t *ret);

/* input.c */
struct mcp_line *mcp_take(struct mcp *m);
void mcp_read_input(struct mcp *m);

/* calls.c */
void mcp_line_free(struct mcp_line *line);
void mcp_call_free(struct mcp_call *call);
void mcp_queues_free(struct mcp *m);
int mcp_progress_due(struct mcp *m, struct mcp_call *list, uint64_t now, int timeout);
void mcp_call_wait(struct mcp *m, struct mcp_call *call, bool front);
void mcp_conn_lost(struct mcp *m, int err);
void mcp_start(struct mcp *m);
void mcp_collect(struct mcp *m);
void mcp_cancelled(struct mcp *m, json_t *params);

/* tool_run.c */
void mcp_run_reply(struct mcp *m, const struct mcp_call *call, const struct airlock_result *res);
void mcp_tool_run(struct mcp *m, json_t *id, json_t *args, json_t *token, const char *tool,
		  const char *runtime, const char *key);
bool mcp_python_runtime_valid(const struct mcp *m, const char *name);
void mcp_tool_run_python(struct mcp *m, json_t *id, json_t *args, json_t *token);
void mcp_tool_run_shell(struct mcp *m, json_t *id, json_t *args, json_t *token);

/* tool_cell.c */
void mcp_tool_run_python_cell(struct mcp *m, json_t *id, json_t *args, json_t *token);
void mcp_tool_reset_python(struct mcp *m, json_t *id, json_t *args, json_t *token);
void mcp_tool_list_processes(struct mcp *m, json_t *id, json_t *args, json_t *token);
void mcp_tool_stop_process(struct mcp *m, json_t *id, json_t *args, json_t *token);

/* tool_session.c */
void mcp_session_note(struct mcp *m, const char *sid, bool add);
void mcp_tool_session_open(struct mcp *m, json_t *id, json_t *args, json_t *token);
void mcp_session_fail(struct mcp *m, json_t *id, const char *tool, const char *sid,
		      const char *path, int r);
void mcp_tool_session_close(struct mcp *m, json_t *id, json_t *args, json_t *token);
void mcp_tool_session_extend(struct mcp *m, json_t *id, json_t *args, json_t *token);
void mcp_tool_session_save(struct mcp *m, json_t *id, json_t *args, json_t *token);

/* tool_file.c */
void mcp_tool_write_file(struct mcp *m, json_t *id, json_t *args, json_t *token);
void mcp_tool_read_file(struct mcp *m, json_t *id, json_t *args, json_t *token);
void mcp_tool_list_files(struct mcp *m, json_t *id, json_t *args, json_t *token);
void mcp_resources_read(struct mcp *m, json_t *id, json_t *params);
void mcp_resources_list(struct mcp *m, json_t *id, json_t *params);
void mcp_resource_templates(struct mcp *m, json_t *id, json_t *params);

/* tools.c */
void mcp_tools_list(struct mcp *m, json_t *id, json_t *params);

#endif

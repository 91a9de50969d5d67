/* conn_req.c: encoding a connection's request by its type. */
#include "conn_req.h"
#include "request.h"

/* Encode req as request id. */
int
conn_encode(uint32_t id, const struct conn_req *req, bool file_bundle, struct proto_out *ret)
{
	switch (req->type) {
	case PROTO_HELLO:
		return proto_encode_hello(id, PROTO_HELLO, req->u.hello, ret);
	case PROTO_RUN:
		return request_encode(req->u.run, id, req->stream, file_bundle, ret);
	case PROTO_CANCEL:
		return proto_encode_cancel(id, req->u.cancel, ret);
	case PROTO_SESSION_OPEN:
		return proto_encode_session_open(id, req->u.session_open, ret);
	case PROTO_SESSION_CLOSE:
	case PROTO_SESSION_PS:
	case PROTO_SESSION_SAVE:
		return proto_encode_session(id, req->type, req->u.session, ret);
	case PROTO_PROCESS_STOP:
		return proto_encode_process_stop(id, req->u.stop, ret);
	case PROTO_SESSION_EXTEND:
		return proto_encode_session_extend(id, req->u.session_extend, ret);
	case PROTO_FILE_WRITE:
	case PROTO_FILE_READ:
	case PROTO_FILE_LIST:
	case PROTO_FILE_DELETE:
		return proto_encode_file_op(id, req->type, req->u.file_op, ret);
	default:
		return proto_encode_simple(id, req->type, ret);
	}
}

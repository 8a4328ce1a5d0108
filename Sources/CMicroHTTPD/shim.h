#ifndef VITRINE_CMICROHTTPD_SHIM_H
#define VITRINE_CMICROHTTPD_SHIM_H
/*
 * GNU libmicrohttpd 0.9.75 (Debian bookworm, Raspberry Pi OS) without a thread of its own: MHD_USE_EPOLL gives one
 * epoll descriptor for the listening socket and every connection, which the player's loop watches; MHD_run then
 * does what is ready. MHD_start_daemon takes its options as varargs, which Swift cannot call, and calls the access
 * handler several times per request while the body arrives; both are handled here.
 *
 * A request is met twice: `begin` when its headers are in (it decides whether the body is gathered in memory up to
 * a cap, streamed into a file the caller opened, or refused unread), and `handle` when the body is complete. An
 * answer that needs work off the loop thread is deferred: the connection is suspended and `vitrine_http_resume`
 * later hands in the answer. Only VitrineRuntime's WebServer calls these.
 */
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>

struct vitrine_http_answer {
    unsigned int status;
    const char *content_type;
    const void *body;
    size_t length;
    /* Extra response headers as "Name: value\n" lines, or NULL. */
    const char *headers;
    /* handle: the answer comes later through vitrine_http_resume. */
    int deferred;
};

/* What begin decided for the body. */
enum vitrine_http_body { VITRINE_HTTP_GATHER = 0, VITRINE_HTTP_STREAM = 1, VITRINE_HTTP_REFUSE = 2 };

struct vitrine_http_start {
    enum vitrine_http_body body;
    /* STREAM: the open file the body is written to, its path (removed when the request ends unfinished) and the
     * most bytes taken. Both are the shim's until handle. */
    int descriptor;
    const char *path;
    unsigned long long limit;
    /* REFUSE: the answer (copied). */
    struct vitrine_http_answer answer;
};

/* The request as handle sees it. `headers` is "name\nvalue\n" pairs, names lowercased; `target` is the URI as
 * sent (path and query, still percent-encoded). For a streamed body, `descriptor` and `path` become the handler's:
 * it closes the file and keeps or removes it. */
struct vitrine_http_request_view {
    const void *id;
    const char *method;
    const char *path;
    const char *target;
    const char *headers;
    size_t headers_length;
    const void *body;
    size_t body_length;
    int descriptor;
    const char *file;
    unsigned long long streamed;
    long long content_length;
};

typedef void (*vitrine_http_begin)(void *context, const struct vitrine_http_request_view *request,
                                   struct vitrine_http_start *start);
typedef void (*vitrine_http_handler)(void *context, const struct vitrine_http_request_view *request,
                                     struct vitrine_http_answer *answer);

struct vitrine_http_server {
    struct MHD_Daemon *daemon;
    void *context;
    vitrine_http_begin begin;
    vitrine_http_handler handle;
    size_t body_limit;
};

struct vitrine_http_request {
    struct MHD_Connection *connection;
    char *target;
    char *headers;
    size_t headers_length;
    long long content_length;
    int began;
    char *body;
    size_t length;
    int too_large;
    int disk_full;
    int descriptor;
    char *file;
    unsigned long long limit;
    unsigned long long streamed;
    /* 0 or the status already answered while the body was still arriving (413, 507). */
    unsigned int refused;
    int suspended;
    int answered_later;
    unsigned int status;
    char *content_type;
    void *answer_body;
    size_t answer_length;
    char *answer_headers;
};

/* Bytes past a limit read and dropped so the client gets its 413; beyond this the connection is closed. */
#define VITRINE_HTTP_DISCARD_LIMIT (256ULL << 20)

struct vitrine_http_header_text {
    char *text;
    size_t length;
    size_t capacity;
};

static enum MHD_Result vitrine_http_collect_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                                   const char *value) {
    (void)kind;
    struct vitrine_http_header_text *text = cls;
    size_t key_length = strlen(key), value_length = value ? strlen(value) : 0;
    size_t needed = text->length + key_length + value_length + 2;
    if (needed > 65536) return MHD_NO;
    if (needed > text->capacity) {
        size_t capacity = needed * 2;
        char *grown = realloc(text->text, capacity);
        if (grown == NULL) return MHD_NO;
        text->text = grown;
        text->capacity = capacity;
    }
    for (size_t i = 0; i < key_length; i++) {
        char c = key[i];
        text->text[text->length++] = (c >= 'A' && c <= 'Z') ? (char)(c + 32) : c;
    }
    text->text[text->length++] = '\n';
    if (value_length) memcpy(text->text + text->length, value, value_length);
    text->length += value_length;
    text->text[text->length++] = '\n';
    return MHD_YES;
}

static enum MHD_Result vitrine_http_reply(struct MHD_Connection *connection, unsigned int status,
                                          const char *content_type, const void *body, size_t length,
                                          const char *headers) {
    struct MHD_Response *response =
        MHD_create_response_from_buffer(length, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (response == NULL) return MHD_NO;
    if (content_type) MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
    MHD_add_response_header(response, "Cache-Control", "no-store");
    MHD_add_response_header(response, "X-Content-Type-Options", "nosniff");
    if (headers) {
        const char *line = headers;
        while (*line) {
            const char *end = strchr(line, '\n');
            const char *colon = strchr(line, ':');
            if (end == NULL || colon == NULL || colon > end) break;
            char name[128], value[512];
            size_t name_length = (size_t)(colon - line), value_length = (size_t)(end - colon - 1);
            while (value_length && colon[1] == ' ') { colon++; value_length--; }
            if (name_length < sizeof name && value_length < sizeof value) {
                memcpy(name, line, name_length);
                name[name_length] = 0;
                memcpy(value, colon + 1, value_length);
                value[value_length] = 0;
                MHD_add_response_header(response, name, value);
            }
            line = end + 1;
        }
    }
    enum MHD_Result result = MHD_queue_response(connection, status, response);
    MHD_destroy_response(response);
    return result;
}

static enum MHD_Result vitrine_http_refuse(struct MHD_Connection *connection, unsigned int status) {
    static const char too_large[] = "{\"error\":\"the request body is too large\"}";
    static const char no_room[] = "{\"error\":\"the frame's disk is too full for this file\"}";
    const char *text = status == 507 ? no_room : too_large;
    return vitrine_http_reply(connection, status, "application/json", text, strlen(text), NULL);
}

static void vitrine_http_drop_file(struct vitrine_http_request *request) {
    if (request->descriptor >= 0) {
        close(request->descriptor);
        request->descriptor = -1;
    }
    if (request->file) {
        unlink(request->file);
        free(request->file);
        request->file = NULL;
    }
}

static void vitrine_http_view(struct vitrine_http_request *request, const char *method, const char *url,
                              struct vitrine_http_request_view *view) {
    memset(view, 0, sizeof *view);
    view->id = request;
    view->method = method;
    view->path = url;
    view->target = request->target ? request->target : url;
    view->headers = request->headers ? request->headers : "";
    view->headers_length = request->headers_length;
    view->descriptor = -1;
    view->content_length = request->content_length;
}

/* The first call of a request (headers in, no body yet): gather them and ask `begin`. */
static enum MHD_Result vitrine_http_begin_request(struct vitrine_http_server *server,
                                                 struct vitrine_http_request *request,
                                                 struct MHD_Connection *connection, const char *url,
                                                 const char *method) {
    request->began = 1;
    request->connection = connection;
    struct vitrine_http_header_text headers = {NULL, 0, 0};
    MHD_get_connection_values(connection, MHD_HEADER_KIND, vitrine_http_collect_header, &headers);
    request->headers = headers.text;
    request->headers_length = headers.length;
    const char *length = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    request->content_length = length ? strtoll(length, NULL, 10) : -1;
    struct vitrine_http_request_view view;
    vitrine_http_view(request, method, url, &view);
    struct vitrine_http_start start;
    memset(&start, 0, sizeof start);
    start.descriptor = -1;
    server->begin(server->context, &view, &start);
    switch (start.body) {
    case VITRINE_HTTP_STREAM:
        request->descriptor = start.descriptor;
        request->file = start.path ? strdup(start.path) : NULL;
        request->limit = start.limit;
        return MHD_YES;
    case VITRINE_HTTP_REFUSE:
        /* Answered before the body is read; libmicrohttpd closes the connection after it. */
        request->refused = start.answer.status;
        return vitrine_http_reply(connection, start.answer.status, start.answer.content_type, start.answer.body,
                                  start.answer.length, start.answer.headers);
    default:
        return MHD_YES;
    }
}

static enum MHD_Result vitrine_http_take_body(struct vitrine_http_server *server,
                                             struct vitrine_http_request *request, const char *data, size_t chunk) {
    if (request->refused) return MHD_YES;
    if (request->descriptor >= 0) {
        if (request->streamed + chunk > request->limit) {
            /* libmicrohttpd 0.9.75 cannot queue an answer while a body is still arriving: the rest is read and
             * dropped (the file is gone at once), then answered 413; a client that sends far more is cut off. */
            vitrine_http_drop_file(request);
            request->too_large = 1;
            request->streamed += chunk;
            return MHD_YES;
        }
        size_t written = 0;
        while (written < chunk) {
            ssize_t count = write(request->descriptor, data + written, chunk - written);
            if (count < 0 && errno == EINTR) continue;
            if (count <= 0) {
                int full = errno == ENOSPC || errno == EDQUOT;
                vitrine_http_drop_file(request);
                if (!full) return MHD_NO;
                request->disk_full = 1;
                request->too_large = 1;
                return MHD_YES;
            }
            written += (size_t)count;
        }
        request->streamed += chunk;
        return MHD_YES;
    }
    if (request->too_large) {
        request->streamed += chunk;
        return request->streamed > VITRINE_HTTP_DISCARD_LIMIT ? MHD_NO : MHD_YES;
    }
    if (request->length + chunk > server->body_limit) {
        request->too_large = 1;
        return MHD_YES;
    }
    char *grown = realloc(request->body, request->length + chunk);
    if (grown == NULL) return MHD_NO;
    memcpy(grown + request->length, data, chunk);
    request->body = grown;
    request->length += chunk;
    return MHD_YES;
}

static enum MHD_Result vitrine_http_access(void *cls, struct MHD_Connection *connection, const char *url,
                                          const char *method, const char *version, const char *upload_data,
                                          size_t *upload_data_size, void **con_cls) {
    (void)version;
    struct vitrine_http_server *server = cls;
    struct vitrine_http_request *request = *con_cls;
    if (request == NULL) return MHD_NO;
    if (!request->began) return vitrine_http_begin_request(server, request, connection, url, method);
    if (*upload_data_size > 0) {
        size_t chunk = *upload_data_size;
        *upload_data_size = 0;
        return vitrine_http_take_body(server, request, upload_data, chunk);
    }
    if (request->refused) return MHD_YES;
    if (request->answered_later) {
        return vitrine_http_reply(connection, request->status, request->content_type, request->answer_body,
                                  request->answer_length, request->answer_headers);
    }
    if (request->suspended) return MHD_YES;
    if (request->too_large) return vitrine_http_refuse(connection, request->disk_full ? 507 : 413);
    struct vitrine_http_request_view view;
    vitrine_http_view(request, method, url, &view);
    view.body = request->body;
    view.body_length = request->length;
    view.descriptor = request->descriptor;
    view.file = request->file;
    view.streamed = request->streamed;
    struct vitrine_http_answer answer = {500, "text/plain", "", 0, NULL, 0};
    server->handle(server->context, &view, &answer);
    if (request->descriptor >= 0) {
        /* The handler has the file now. */
        request->descriptor = -1;
        free(request->file);
        request->file = NULL;
    }
    if (answer.deferred) {
        request->suspended = 1;
        MHD_suspend_connection(connection);
        return MHD_YES;
    }
    return vitrine_http_reply(connection, answer.status, answer.content_type, answer.body, answer.length,
                              answer.headers);
}

/* Called with the URI as sent before anything else of the request: its return value becomes the request's state. */
static void *vitrine_http_uri(void *cls, const char *uri, struct MHD_Connection *connection) {
    (void)cls;
    (void)connection;
    struct vitrine_http_request *request = calloc(1, sizeof *request);
    if (request == NULL) return NULL;
    request->descriptor = -1;
    request->content_length = -1;
    request->target = uri ? strdup(uri) : NULL;
    return request;
}

static void vitrine_http_completed(void *cls, struct MHD_Connection *connection, void **con_cls,
                                   enum MHD_RequestTerminationCode code) {
    (void)cls;
    (void)connection;
    (void)code;
    struct vitrine_http_request *request = *con_cls;
    if (request) {
        vitrine_http_drop_file(request);
        free(request->target);
        free(request->headers);
        free(request->body);
        free(request->content_type);
        free(request->answer_body);
        free(request->answer_headers);
        free(request);
        *con_cls = NULL;
    }
}

/* The answer to a deferred request (`id` from its view); its memory is copied. */
static inline void vitrine_http_resume(const void *id, const struct vitrine_http_answer *answer) {
    struct vitrine_http_request *request = (struct vitrine_http_request *)id;
    if (!request->suspended || request->answered_later) return;
    request->status = answer->status;
    request->content_type = strdup(answer->content_type ? answer->content_type : "text/plain");
    request->answer_length = answer->length;
    request->answer_body = malloc(answer->length ? answer->length : 1);
    if (request->answer_body && answer->length) memcpy(request->answer_body, answer->body, answer->length);
    request->answer_headers = answer->headers ? strdup(answer->headers) : NULL;
    request->answered_later = 1;
    request->suspended = 0;
    MHD_resume_connection(request->connection);
}

/* Listens on `address` (IPv4 dotted quad) and `port` with bounded connections: at most `connections` at once and
 * `per_ip` from one address, each dropped after `timeout` idle seconds, `memory` bytes of buffers each. With
 * `certificate` and `key` (PEM text), HTTPS. -1 with errno when it cannot. */
static inline int vitrine_http_start(struct vitrine_http_server *server, const char *address, uint16_t port,
                                     unsigned int connections, unsigned int per_ip, unsigned int timeout,
                                     size_t memory, const char *certificate, const char *key) {
    struct sockaddr_in where;
    memset(&where, 0, sizeof where);
    where.sin_family = AF_INET;
    where.sin_port = htons(port);
    if (inet_pton(AF_INET, address, &where.sin_addr) != 1) {
        errno = EINVAL;
        return -1;
    }
    struct MHD_OptionItem options[] = {
        {MHD_OPTION_SOCK_ADDR, 0, &where},
        {MHD_OPTION_CONNECTION_LIMIT, (intptr_t)connections, NULL},
        {MHD_OPTION_PER_IP_CONNECTION_LIMIT, (intptr_t)per_ip, NULL},
        {MHD_OPTION_CONNECTION_TIMEOUT, (intptr_t)timeout, NULL},
        {MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)memory, NULL},
        {MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)vitrine_http_uri, NULL},
        {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)vitrine_http_completed, NULL},
        {certificate ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, (void *)certificate},
        {MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)key},
        {MHD_OPTION_END, 0, NULL},
    };
    unsigned int flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | (certificate ? MHD_USE_TLS : 0);
    server->daemon = MHD_start_daemon(flags, 0, NULL, NULL, vitrine_http_access, server, MHD_OPTION_ARRAY, options,
                                      MHD_OPTION_END);
    if (server->daemon == NULL && errno == 0) errno = EADDRINUSE;
    return server->daemon ? 0 : -1;
}

static inline int vitrine_http_epoll_descriptor(struct vitrine_http_server *server) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(server->daemon, MHD_DAEMON_INFO_EPOLL_FD);
    return info ? info->epoll_fd : -1;
}

/* The port it listens on (the one the system chose for port 0). */
static inline uint16_t vitrine_http_port(struct vitrine_http_server *server) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(server->daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : 0;
}

/* Milliseconds until MHD_run is due for a timeout, or -1 for none. */
static inline long long vitrine_http_timeout(struct vitrine_http_server *server) {
    MHD_UNSIGNED_LONG_LONG milliseconds = 0;
    return MHD_get_timeout(server->daemon, &milliseconds) == MHD_YES ? (long long)milliseconds : -1;
}

#endif

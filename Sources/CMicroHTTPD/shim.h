#ifndef VITRINE_CMICROHTTPD_SHIM_H
#define VITRINE_CMICROHTTPD_SHIM_H
/*
 * GNU libmicrohttpd 0.9.75 (Debian bookworm, Raspberry Pi OS) without a thread of its own: MHD_USE_EPOLL gives one
 * epoll descriptor for the listening socket and every connection, which the player's loop watches; MHD_run then
 * does what is ready. MHD_start_daemon takes its options as varargs, which Swift cannot call, and calls the access
 * handler several times per request while the body arrives; both are handled here. The shim gathers a request
 * whole (headers, body up to a cap) and makes one call to `handle`, which answers with a status, a content type
 * and a body; only VitrineRuntime's WebServer calls these.
 */
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

struct vitrine_http_answer {
    unsigned int status;
    const char *content_type;
    const void *body;
    size_t length;
    /* Extra response headers as "Name: value\n" lines, or NULL. */
    const char *headers;
};

/* One whole request. `headers` is "name\nvalue\n" pairs, names lowercased. The answer's memory must stay valid
 * until the handler returns: it is copied. */
typedef void (*vitrine_http_handler)(void *context, const char *method, const char *url, const char *headers,
                                     size_t headers_length, const void *body, size_t body_length,
                                     struct vitrine_http_answer *answer);

struct vitrine_http_server {
    struct MHD_Daemon *daemon;
    void *context;
    vitrine_http_handler handle;
    size_t body_limit;
};

struct vitrine_http_request {
    char *body;
    size_t length;
    int too_large;
};

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

static enum MHD_Result vitrine_http_access(void *cls, struct MHD_Connection *connection, const char *url,
                                          const char *method, const char *version, const char *upload_data,
                                          size_t *upload_data_size, void **con_cls) {
    (void)version;
    struct vitrine_http_server *server = cls;
    struct vitrine_http_request *request = *con_cls;
    if (request == NULL) {
        request = calloc(1, sizeof *request);
        if (request == NULL) return MHD_NO;
        *con_cls = request;
        return MHD_YES;
    }
    if (*upload_data_size > 0) {
        size_t chunk = *upload_data_size;
        *upload_data_size = 0;
        if (request->too_large || request->length + chunk > server->body_limit) {
            request->too_large = 1;
            return MHD_YES;
        }
        char *grown = realloc(request->body, request->length + chunk);
        if (grown == NULL) return MHD_NO;
        memcpy(grown + request->length, upload_data, chunk);
        request->body = grown;
        request->length += chunk;
        return MHD_YES;
    }
    if (request->too_large) {
        static const char refused[] = "{\"error\":\"the request body is too large\"}";
        return vitrine_http_reply(connection, 413, "application/json", refused, sizeof refused - 1, NULL);
    }
    struct vitrine_http_header_text headers = {NULL, 0, 0};
    MHD_get_connection_values(connection, MHD_HEADER_KIND, vitrine_http_collect_header, &headers);
    struct vitrine_http_answer answer = {500, "text/plain", "", 0, NULL};
    server->handle(server->context, method, url, headers.text ? headers.text : "", headers.length, request->body,
                   request->length, &answer);
    free(headers.text);
    return vitrine_http_reply(connection, answer.status, answer.content_type, answer.body, answer.length,
                              answer.headers);
}

static void vitrine_http_completed(void *cls, struct MHD_Connection *connection, void **con_cls,
                                   enum MHD_RequestTerminationCode code) {
    (void)cls;
    (void)connection;
    (void)code;
    struct vitrine_http_request *request = *con_cls;
    if (request) {
        free(request->body);
        free(request);
        *con_cls = NULL;
    }
}

/* Listens on `address` (IPv4 dotted quad) and `port` with bounded connections: at most `connections` at once and
 * `per_ip` from one address, each dropped after `timeout` idle seconds, `memory` bytes of buffers each. NULL with
 * errno when it cannot. */
static inline int vitrine_http_start(struct vitrine_http_server *server, const char *address, uint16_t port,
                                     unsigned int connections, unsigned int per_ip, unsigned int timeout,
                                     size_t memory) {
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
        {MHD_OPTION_END, 0, NULL},
    };
    server->daemon = MHD_start_daemon(MHD_USE_EPOLL, 0, NULL, NULL, vitrine_http_access, server,
                                      MHD_OPTION_NOTIFY_COMPLETED, vitrine_http_completed, NULL, MHD_OPTION_ARRAY,
                                      options, MHD_OPTION_END);
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

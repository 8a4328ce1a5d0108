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
#include <pthread.h>
#include <sys/eventfd.h>
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
/* WAIT: the decision needs work off the loop thread (the file is opened on a share that may stall): the
 * connection is suspended unread until vitrine_http_begin_later hands the decision in. */
enum vitrine_http_body {
    VITRINE_HTTP_GATHER = 0,
    VITRINE_HTTP_STREAM = 1,
    VITRINE_HTTP_REFUSE = 2,
    VITRINE_HTTP_WAIT = 3
};

struct vitrine_http_start {
    enum vitrine_http_body body;
    /* STREAM: the open file the body is written to, its path (removed when the request ends unfinished) and the
     * most bytes taken. Both are the shim's until handle. */
    int descriptor;
    const char *path;
    unsigned long long limit;
    /* Non-zero when `limit` is the disk's free space (less than the upload limit): a body past it is answered 507,
     * as a sized one is, not 413. */
    int limit_is_space;
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

struct vitrine_http_writer;

struct vitrine_http_server {
    struct MHD_Daemon *daemon;
    void *context;
    vitrine_http_begin begin;
    vitrine_http_handler handle;
    size_t body_limit;
    /* The thread that writes streamed bodies to their files (vitrine_http_writer_*); made by vitrine_http_start. */
    struct vitrine_http_writer *writer;
};

/* Streamed bodies are written by a thread of their own: the file may be on a share that stalls, and a write
 * that sleeps must not sleep on the player's loop. Chunks are copied to the stream's queue; past a high mark the
 * connection is suspended until the writer brings it below a low mark, and the body's end waits, suspended, until
 * everything is written. The writer rings an eventfd the loop watches; the loop resumes the connections then. A
 * stream the request gives up (over its limit, abandoned) is closed and unlinked by the writer. */
struct vitrine_http_chunk {
    struct vitrine_http_chunk *next;
    size_t length;
    char data[];
};

struct vitrine_http_stream {
    int descriptor;
    char *path;
    struct vitrine_http_chunk *head, *tail;
    size_t queued;
    /* errno of the first write that failed; chunks after it are dropped. */
    int error;
    /* Given up by its request: the writer drops its chunks, closes and unlinks the file, and frees it. */
    int closing;
    struct vitrine_http_stream *next;
};

#define VITRINE_HTTP_WRITE_HIGH (1u << 20)
#define VITRINE_HTTP_WRITE_LOW (256u << 10)
#define VITRINE_HTTP_WAITING_MAX 64

struct vitrine_http_writer {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    pthread_t thread;
    int stopping;
    int wakeup;
    struct vitrine_http_stream *streams;
    /* Loop-owned: requests suspended until their stream drains. */
    struct vitrine_http_request *waiting[VITRINE_HTTP_WAITING_MAX];
    int waiting_count;
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
    /* The writer's side of the file being streamed into (descriptor and file stay the request's view of it). */
    struct vitrine_http_stream *stream;
    /* Suspended until the stream drains: 1 below the low mark, 2 to empty (the body's end). */
    int write_wait;
    unsigned long long limit;
    int limit_is_space;
    unsigned long long streamed;
    /* 0 or the status already answered while the body was still arriving (413, 507). */
    unsigned int refused;
    int suspended;
    /* Suspended at its headers until vitrine_http_begin_later. */
    int waiting_start;
    /* Resumed at its headers: libmicrohttpd calls the handler for the headers once more (the state it was
     * suspended in is run again), which is not the end of the body. */
    int headers_again;
    int answered_later;
    unsigned int status;
    char *content_type;
    void *answer_body;
    size_t answer_length;
    char *answer_headers;
};


static void vitrine_http_free_chunks(struct vitrine_http_stream *stream) {
    while (stream->head) {
        struct vitrine_http_chunk *next = stream->head->next;
        free(stream->head);
        stream->head = next;
    }
    stream->tail = NULL;
    stream->queued = 0;
}

static void *vitrine_http_writer_run(void *argument) {
    struct vitrine_http_writer *writer = argument;
    pthread_mutex_lock(&writer->lock);
    for (;;) {
        struct vitrine_http_stream *stream = writer->streams, *previous = NULL;
        while (stream && !stream->closing && !stream->head) {
            previous = stream;
            stream = stream->next;
        }
        if (stream == NULL) {
            if (writer->stopping && writer->streams == NULL) break;
            pthread_cond_wait(&writer->cond, &writer->lock);
            continue;
        }
        if (stream->closing) {
            if (previous) previous->next = stream->next; else writer->streams = stream->next;
            vitrine_http_free_chunks(stream);
            pthread_mutex_unlock(&writer->lock);
            if (stream->descriptor >= 0) close(stream->descriptor);
            if (stream->path) unlink(stream->path);
            free(stream->path);
            free(stream);
            pthread_mutex_lock(&writer->lock);
            continue;
        }
        struct vitrine_http_chunk *chunk = stream->head;
        stream->head = chunk->next;
        if (stream->head == NULL) stream->tail = NULL;
        int failed = stream->error;
        pthread_mutex_unlock(&writer->lock);
        size_t written = 0;
        while (!failed && written < chunk->length) {
            ssize_t count = write(stream->descriptor, chunk->data + written, chunk->length - written);
            if (count < 0 && errno == EINTR) continue;
            if (count <= 0) {
                failed = count < 0 ? errno : EIO;
                break;
            }
            written += (size_t)count;
        }
        pthread_mutex_lock(&writer->lock);
        size_t before = stream->queued;
        stream->queued -= chunk->length;
        if (failed && !stream->error) stream->error = failed;
        free(chunk);
        /* Whoever waits on this stream may go on: below the low mark, drained, or failed. */
        if ((before > VITRINE_HTTP_WRITE_LOW && stream->queued <= VITRINE_HTTP_WRITE_LOW) || stream->queued == 0 ||
            failed) {
            uint64_t one = 1;
            ssize_t ignored = write(writer->wakeup, &one, sizeof one);
            (void)ignored;
        }
    }
    pthread_mutex_unlock(&writer->lock);
    close(writer->wakeup);
    pthread_cond_destroy(&writer->cond);
    pthread_mutex_destroy(&writer->lock);
    free(writer);
    return NULL;
}

/* A writer thread and its eventfd; NULL with errno set when it cannot be made. */
static struct vitrine_http_writer *vitrine_http_writer_new(void) {
    struct vitrine_http_writer *writer = calloc(1, sizeof *writer);
    if (writer == NULL) return NULL;
    writer->wakeup = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (writer->wakeup < 0) {
        free(writer);
        return NULL;
    }
    pthread_mutex_init(&writer->lock, NULL);
    pthread_cond_init(&writer->cond, NULL);
    if (pthread_create(&writer->thread, NULL, vitrine_http_writer_run, writer) != 0) {
        close(writer->wakeup);
        pthread_cond_destroy(&writer->cond);
        pthread_mutex_destroy(&writer->lock);
        free(writer);
        errno = EAGAIN;
        return NULL;
    }
    return writer;
}

/* Ends the writer once every stream it has is written or closed. Not joined: a write stuck on a stalled share
 * must not hold the caller (the loop); the thread frees what it has when it is done. */
static void vitrine_http_writer_stop(struct vitrine_http_writer *writer) {
    if (writer == NULL) return;
    pthread_mutex_lock(&writer->lock);
    writer->stopping = 1;
    pthread_cond_signal(&writer->cond);
    pthread_mutex_unlock(&writer->lock);
    pthread_detach(writer->thread);
}

static struct vitrine_http_stream *vitrine_http_stream_new(struct vitrine_http_writer *writer, int descriptor,
                                                         const char *path) {
    struct vitrine_http_stream *stream = calloc(1, sizeof *stream);
    if (stream == NULL) return NULL;
    stream->descriptor = descriptor;
    stream->path = path ? strdup(path) : NULL;
    pthread_mutex_lock(&writer->lock);
    stream->next = writer->streams;
    writer->streams = stream;
    pthread_mutex_unlock(&writer->lock);
    return stream;
}

/* Queues a copy of `data`; returns the bytes now queued, or 0 with errno when it cannot (no memory). */
static size_t vitrine_http_stream_queue(struct vitrine_http_writer *writer, struct vitrine_http_stream *stream,
                                        const char *data, size_t length) {
    struct vitrine_http_chunk *chunk = malloc(sizeof *chunk + length);
    if (chunk == NULL) return 0;
    chunk->next = NULL;
    chunk->length = length;
    memcpy(chunk->data, data, length);
    pthread_mutex_lock(&writer->lock);
    if (stream->tail) stream->tail->next = chunk; else stream->head = chunk;
    stream->tail = chunk;
    stream->queued += length;
    size_t queued = stream->queued;
    pthread_cond_signal(&writer->cond);
    pthread_mutex_unlock(&writer->lock);
    return queued;
}

/* The stream's state under the lock: bytes queued, and the error of a failed write (0 for none). */
static void vitrine_http_stream_state(struct vitrine_http_writer *writer, struct vitrine_http_stream *stream,
                                      size_t *queued, int *error) {
    pthread_mutex_lock(&writer->lock);
    *queued = stream->queued;
    *error = stream->error;
    pthread_mutex_unlock(&writer->lock);
}

/* Gives the stream up: the writer closes and unlinks its file. */
static void vitrine_http_stream_close(struct vitrine_http_writer *writer, struct vitrine_http_stream *stream) {
    pthread_mutex_lock(&writer->lock);
    stream->closing = 1;
    pthread_cond_signal(&writer->cond);
    pthread_mutex_unlock(&writer->lock);
}

/* Takes a drained stream back from the writer: its descriptor and path are the caller's from now on. */
static void vitrine_http_stream_detach(struct vitrine_http_writer *writer, struct vitrine_http_stream *stream) {
    pthread_mutex_lock(&writer->lock);
    struct vitrine_http_stream **link = &writer->streams;
    while (*link && *link != stream) link = &(*link)->next;
    if (*link) *link = stream->next;
    pthread_mutex_unlock(&writer->lock);
    vitrine_http_free_chunks(stream);
    free(stream->path);
    free(stream);
}

static void vitrine_http_wait_for_writes(struct vitrine_http_server *server, struct vitrine_http_request *request,
                                         int until_empty) {
    struct vitrine_http_writer *writer = server->writer;
    if (writer->waiting_count < VITRINE_HTTP_WAITING_MAX) writer->waiting[writer->waiting_count++] = request;
    request->write_wait = until_empty ? 2 : 1;
    MHD_suspend_connection(request->connection);
}

static void vitrine_http_forget_waiting(struct vitrine_http_server *server, struct vitrine_http_request *request) {
    struct vitrine_http_writer *writer = server->writer;
    if (writer == NULL) return;
    for (int i = 0; i < writer->waiting_count; i++) {
        if (writer->waiting[i] == request) {
            writer->waiting[i] = writer->waiting[--writer->waiting_count];
            return;
        }
    }
}

/* On the loop, when the writer's eventfd is readable (and before stopping, with `all`): resumes the connections
 * whose streams are below the low mark, drained or failed. */
static inline void vitrine_http_writer_service(struct vitrine_http_server *server, int all) {
    struct vitrine_http_writer *writer = server->writer;
    if (writer == NULL) return;
    uint64_t count;
    ssize_t ignored = read(writer->wakeup, &count, sizeof count);
    (void)ignored;
    for (int i = 0; i < writer->waiting_count;) {
        struct vitrine_http_request *request = writer->waiting[i];
        size_t queued = 0;
        int error = 0;
        if (request->stream) vitrine_http_stream_state(writer, request->stream, &queued, &error);
        int ready = all || request->stream == NULL || error ||
                    (request->write_wait == 1 ? queued <= VITRINE_HTTP_WRITE_LOW : queued == 0);
        if (!ready) {
            i++;
            continue;
        }
        writer->waiting[i] = writer->waiting[--writer->waiting_count];
        request->write_wait = 0;
        MHD_resume_connection(request->connection);
    }
}

static inline int vitrine_http_writer_descriptor(struct vitrine_http_server *server) {
    return server->writer ? server->writer->wakeup : -1;
}

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

/* The request gives its file up: closed and removed by the writer (never on the loop: the share may stall). */
static void vitrine_http_drop_file(struct vitrine_http_server *server, struct vitrine_http_request *request) {
    if (request->stream) {
        vitrine_http_stream_close(server->writer, request->stream);
        request->stream = NULL;
    } else if (request->descriptor >= 0) {
        close(request->descriptor);
        if (request->file) unlink(request->file);
    }
    request->descriptor = -1;
    free(request->file);
    request->file = NULL;
}

/* A write to the request's file failed with `error`: the file goes; a full disk is the client's 507 (1), anything
 * else ends the connection (0). */
static int vitrine_http_write_failed(struct vitrine_http_server *server, struct vitrine_http_request *request,
                                     int error) {
    vitrine_http_drop_file(server, request);
    if (error != ENOSPC && error != EDQUOT) return 0;
    request->disk_full = 1;
    request->too_large = 1;
    return 1;
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
        request->stream = vitrine_http_stream_new(server->writer, start.descriptor, start.path);
        request->limit = start.limit;
        request->limit_is_space = start.limit_is_space;
        return request->stream ? MHD_YES : MHD_NO;
    case VITRINE_HTTP_WAIT:
        request->waiting_start = 1;
        request->suspended = 1;
        MHD_suspend_connection(connection);
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
    if (request->answered_later) {
        /* Answered after waiting at its headers: the answer is queued at the repeated headers call, before the body;
         * should any of it come, it is read and dropped. */
        request->streamed += chunk;
        return request->streamed > VITRINE_HTTP_DISCARD_LIMIT ? MHD_NO : MHD_YES;
    }
    if (request->stream) {
        size_t queued = 0;
        int error = 0;
        vitrine_http_stream_state(server->writer, request->stream, &queued, &error);
        if (error) {
            /* A write failed: a full disk is answered 507 once the body is in, anything else ends the connection. */
            if (!vitrine_http_write_failed(server, request, error)) return MHD_NO;
            request->streamed += chunk;
            return MHD_YES;
        }
        if (request->streamed + chunk > request->limit) {
            /* libmicrohttpd 0.9.75 cannot queue an answer while a body is still arriving: the rest is read and
             * dropped (the file goes at once), then answered 413 (507 past the disk's room); a client that sends
             * far more is cut off. */
            vitrine_http_drop_file(server, request);
            request->too_large = 1;
            request->disk_full = request->limit_is_space;
            request->streamed += chunk;
            return MHD_YES;
        }
        queued = vitrine_http_stream_queue(server->writer, request->stream, data, chunk);
        if (queued == 0) return MHD_NO;
        request->streamed += chunk;
        /* The disk is slower than the network: nothing more is read from this client until it catches up. */
        if (queued > VITRINE_HTTP_WRITE_HIGH) vitrine_http_wait_for_writes(server, request, 0);
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
    if (request->headers_again && *upload_data_size == 0) {
        request->headers_again = 0;
        return MHD_YES;
    }
    request->headers_again = 0;
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
    if (request->stream) {
        /* The body is in: its file is handed over once every byte of it is written. */
        size_t queued = 0;
        int error = 0;
        vitrine_http_stream_state(server->writer, request->stream, &queued, &error);
        if (error) {
            if (!vitrine_http_write_failed(server, request, error)) return MHD_NO;
            return vitrine_http_refuse(connection, 507);
        }
        if (queued > 0) {
            vitrine_http_wait_for_writes(server, request, 1);
            return MHD_YES;
        }
        vitrine_http_stream_detach(server->writer, request->stream);
        request->stream = NULL;
    }
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
    (void)connection;
    (void)code;
    struct vitrine_http_server *server = cls;
    struct vitrine_http_request *request = *con_cls;
    if (request) {
        vitrine_http_forget_waiting(server, request);
        vitrine_http_drop_file(server, request);
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

/* Keeps a copy of `answer` for the suspended request and resumes it: libmicrohttpd calls the handler again, which
 * queues the answer. */
static void vitrine_http_answer_later(struct vitrine_http_request *request, const struct vitrine_http_answer *answer) {
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

/* The decision for a request that waited at its headers (`id` from its view): STREAM into the file given, or
 * REFUSE with the answer (copied). Returns 0 when the request is not waiting (the caller keeps the file). */
static inline int vitrine_http_begin_later(struct vitrine_http_server *server, const void *id,
                                           const struct vitrine_http_start *start) {
    struct vitrine_http_request *request = (struct vitrine_http_request *)id;
    if (!request->waiting_start || !request->suspended) return 0;
    request->waiting_start = 0;
    if (start->body == VITRINE_HTTP_STREAM) {
        request->headers_again = 1;
        request->descriptor = start->descriptor;
        request->file = start->path ? strdup(start->path) : NULL;
        request->stream = vitrine_http_stream_new(server->writer, start->descriptor, start->path);
        request->limit = start->limit;
        request->limit_is_space = start->limit_is_space;
        request->suspended = 0;
        MHD_resume_connection(request->connection);
        return 1;
    }
    vitrine_http_answer_later(request, &start->answer);
    return 1;
}

/* The answer to a deferred request (`id` from its view); its memory is copied. */
static inline void vitrine_http_resume(const void *id, const struct vitrine_http_answer *answer) {
    struct vitrine_http_request *request = (struct vitrine_http_request *)id;
    if (!request->suspended || request->answered_later) return;
    request->waiting_start = 0;
    vitrine_http_answer_later(request, answer);
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
        {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)vitrine_http_completed, server},
        {certificate ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, (void *)certificate},
        {MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)key},
        {MHD_OPTION_END, 0, NULL},
    };
    unsigned int flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | (certificate ? MHD_USE_TLS : 0);
    server->writer = vitrine_http_writer_new();
    if (server->writer == NULL) return -1;
    server->daemon = MHD_start_daemon(flags, 0, NULL, NULL, vitrine_http_access, server, MHD_OPTION_ARRAY, options,
                                      MHD_OPTION_END);
    if (server->daemon == NULL) {
        if (errno == 0) errno = EADDRINUSE;
        int saved = errno;
        vitrine_http_writer_stop(server->writer);
        server->writer = NULL;
        errno = saved;
    }
    return server->daemon ? 0 : -1;
}

/* Stops the server: connections waiting on writes are resumed first (libmicrohttpd must not stop with a
 * connection suspended), their files handed to the writer as the connections end, and the writer told to end. */
static inline void vitrine_http_stop(struct vitrine_http_server *server) {
    vitrine_http_writer_service(server, 1);
    if (server->daemon) MHD_stop_daemon(server->daemon);
    server->daemon = NULL;
    vitrine_http_writer_stop(server->writer);
    server->writer = NULL;
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

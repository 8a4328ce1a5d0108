// Vitrine's web remote: steers the frame and manages its library from a phone.
// Everything the frame sends is shown with textContent, never parsed as HTML.
"use strict";

const POLL_MS = 1500;
const UNAUTHORIZED =
  "This page needs the frame's access link (scan the QR code from the frame: press Info)";
const UNREACHABLE = "The frame does not answer";

const el = (id) => document.getElementById(id);

const state = {
  status: null,
  categories: [],
  // undefined until the first status, so the first one always loads the categories.
  seenCategory: undefined,
  slideKey: null,
  libraryCategory: null,
  // The categories the steered screen plays (the library's, or its output's), and the last status as it came.
  playing: null,
  lastAll: null,
  unauthorized: false,
  // With several screens each playing its own show: the output this page steers (null: the first one's).
  output: null,
};

class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

function categoryLabel(name) {
  return name === "" ? "Library" : name;
}

function query(params) {
  return (
    "?" +
    Object.entries(params)
      .map(([key, value]) => encodeURIComponent(key) + "=" + encodeURIComponent(value))
      .join("&")
  );
}

function photoQuery(category, name, hidden) {
  const params = { category, name };
  if (hidden) params.hidden = "1";
  return query(params);
}

// ---------------------------------------------------------------- messages

function say(text, kind = "ok") {
  const message = el("message");
  message.textContent = text;
  message.dataset.kind = kind;
}

function sayError(error) {
  // A 401 is already explained in the status line and the message; nothing to add.
  if (error instanceof ApiError && error.status === 401) return;
  say(error.message, "error");
}

function markUnauthorized() {
  state.unauthorized = true;
  const status = el("status");
  status.textContent = UNAUTHORIZED;
  status.dataset.kind = "error";
  say(UNAUTHORIZED, "error");
}

function markAuthorized() {
  if (!state.unauthorized) return;
  state.unauthorized = false;
  if (el("message").textContent === UNAUTHORIZED) say("");
}

// ---------------------------------------------------------------- API

async function readJSON(response) {
  try {
    return await response.json();
  } catch {
    return null;
  }
}

function errorText(status, data) {
  if (data && typeof data.error === "string" && data.error !== "") return data.error;
  return "The frame answered " + status;
}

async function api(method, path, body) {
  const options = { method, credentials: "same-origin", headers: { Accept: "application/json" } };
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, options);
  } catch {
    throw new ApiError(0, UNREACHABLE);
  }
  if (response.status === 401) {
    markUnauthorized();
    throw new ApiError(401, UNAUTHORIZED);
  }
  markAuthorized();
  const data = await readJSON(response);
  if (!response.ok) throw new ApiError(response.status, errorText(response.status, data));
  return data;
}

// The output's query parameter, when the page steers one of several screens.
function outputQuery(params = {}) {
  if (state.output !== null) params.output = state.output;
  return Object.keys(params).length > 0 ? query(params) : "";
}

// Resolves to whether the frame took the command.
async function command(text) {
  try {
    // `@NAME COMMAND` addresses one output's show, as `vitrine ctl --output NAME` does.
    await api("POST", "/api/command", { command: state.output === null ? text : "@" + state.output + " " + text });
    poll();
    return true;
  } catch (error) {
    sayError(error);
    return false;
  }
}

function userPaused(status) {
  return Boolean(status) && Array.isArray(status.paused) && status.paused.includes("user");
}

// Runs `work` with `button` disabled, so a second tap cannot send the request twice.
async function withButton(button, work) {
  button.disabled = true;
  try {
    await work();
  } finally {
    button.disabled = false;
  }
}

// ---------------------------------------------------------------- status

let pollTimer = 0;
let pollInFlight = false;
let pollAgain = false;

async function poll() {
  clearTimeout(pollTimer);
  pollTimer = 0;
  if (pollInFlight) {
    // A command was just sent: look again as soon as the answer in flight is in.
    pollAgain = true;
    return;
  }
  pollInFlight = true;
  try {
    showStatus(await api("GET", "/api/status"));
  } catch (error) {
    if (error.status !== 401) {
      const status = el("status");
      status.textContent = error.message;
      status.dataset.kind = "error";
    }
  } finally {
    pollInFlight = false;
    if (!document.hidden) pollTimer = setTimeout(poll, pollAgain ? 0 : POLL_MS);
    pollAgain = false;
  }
}

function statusLine(status) {
  const parts = [];
  if (status.category !== null && status.category !== undefined) {
    parts.push(categoryLabel(status.category));
  }
  if (status.playlist) {
    const until = typeof status.playlist.until === "string" ? " until " + status.playlist.until.slice(11) : "";
    parts.push(status.playlist.held_by_hand ? status.playlist.name + " (held by hand)" : status.playlist.name + until);
  }
  if (status.position !== null && status.position !== undefined) {
    parts.push(status.position + " of " + status.count);
  } else if (status.count === 0) {
    parts.push("no photos");
  }
  // "loading" is the player waiting a moment for the next photo's decode, not a pause anyone chose.
  const paused = (Array.isArray(status.paused) ? status.paused : []).filter((reason) => reason !== "loading");
  if (status.screen === "off") {
    parts.push("screen off");
  } else if (paused.length > 0) {
    parts.push("paused (" + paused.join(", ") + ")");
  } else {
    parts.push("playing");
  }
  return parts.join(" · ");
}

// The screens that each play a show of their own (a mirror's other screens show the first one's).
function outputNames(status) {
  const outputs = Array.isArray(status.outputs) ? status.outputs : [];
  return outputs.filter((output) => output.mirrors === undefined).map((output) => output.name);
}

// Offers the screens to steer where there are several, and keeps the one chosen while it is there.
function showOutputs(status) {
  const names = outputNames(status);
  const field = el("output-field");
  field.hidden = names.length < 2;
  if (names.length < 2) {
    state.output = null;
    return;
  }
  if (state.output === null || !names.includes(state.output)) state.output = names[0];
  const select = el("output");
  const shown = Array.from(select.options).map((option) => option.value);
  if (!sameJSON(shown, names)) {
    select.replaceChildren(
      ...names.map((name) => {
        const option = document.createElement("option");
        option.value = name;
        option.textContent = name;
        return option;
      }),
    );
  }
  select.value = state.output;
}

// The chosen output's show, with what the player says for all of them (sources, presence).
function chosenStatus(status) {
  if (state.output === null) return status;
  const entry = (status.outputs || []).find((output) => output.name === state.output);
  return entry ? { ...status, ...entry } : status;
}

function showStatus(all) {
  state.lastAll = all;
  showOutputs(all);
  const status = chosenStatus(all);
  state.status = status;
  const line = el("status");
  line.textContent = statusLine(status);
  line.dataset.kind = "";

  const paused = userPaused(status);
  const pause = el("pause");
  pause.textContent = paused ? "Resume" : "Pause";
  pause.setAttribute("aria-pressed", String(paused));

  el("screen").textContent = status.screen === "off" ? "Screen on" : "Screen off";

  const star = el("star");
  star.disabled = status.slide === null;
  star.textContent = status.favourite ? "★ Favourite" : "☆ Favourite";
  star.setAttribute("aria-pressed", String(Boolean(status.favourite)));
  el("why").textContent = whyLine(status);

  showSlide(status);
  showSources(status.sources);

  const seen = state.output + "\n" + status.category;
  if (seen !== state.seenCategory) {
    state.seenCategory = seen;
    refreshCategories();
  }
}

// Why this photo is on screen, in words: "On this day", "A favourite", "Recent", "Next in the round".
const WHY = {
  "on this day": "On this day",
  "favourite": "A favourite",
  "recent": "Recent",
  "round": "Next in the round",
  "chosen": "Chosen",
};

function whyLine(status) {
  return status.slide === null ? "" : (WHY[status.why] || "");
}

// Where the photos come from (Nextcloud, a NAS): each source's sync in words, e.g. "Family: fetching 3 of 200".
function showSources(sources) {
  const line = el("sources");
  const list = Array.isArray(sources) ? sources : [];
  line.hidden = list.length === 0;
  line.textContent = list.map((source) => source.name + ": " + source.summary).join(" · ");
  line.dataset.kind = list.some((source) => ["offline", "busy", "refused", "error"].includes(source.state))
    ? "error" : "";
}

function showSlide(status) {
  const key = status.slide === null ? null : state.output + "\n" + status.slide + "\n" + status.presented;
  if (key === state.slideKey) return;
  state.slideKey = key;
  const image = el("slide");
  if (status.slide === null) {
    showSlidePlaceholder();
    return;
  }
  image.alt = status.slide;
  image.src = "/api/slide.jpg" + outputQuery({ v: String(status.presented) });
}

function showSlidePlaceholder() {
  el("slide").hidden = true;
  el("slide-placeholder").hidden = false;
}

// ---------------------------------------------------------------- categories

function fillSelect(select, categories, chosen, describe) {
  select.replaceChildren(
    ...categories.map((category) => {
      const option = document.createElement("option");
      option.value = category.name;
      option.textContent = describe(category);
      return option;
    }),
  );
  const index = categories.findIndex((category) => category.name === chosen);
  select.selectedIndex = index;
}

function sameJSON(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

async function refreshCategories({ photos = false } = {}) {
  let categories;
  // The screen's show may play only some of the library's categories (its output's `categories`).
  let playing;
  try {
    categories = (await api("GET", "/api/categories")).categories;
    playing = state.output === null ? categories : (await api("GET", "/api/categories" + outputQuery())).categories;
  } catch (error) {
    sayError(error);
    return;
  }
  const active = playing.find((category) => category.active);
  const activeName = active ? active.name : null;

  // Rebuilding a select the user has open closes it on a phone: only rebuild when what it shows changed.
  const playingNames = playing.map((category) => category.name);
  const select = el("category");
  if (!sameJSON(playingNames, Array.from(select.options).map((option) => option.value))) {
    fillSelect(select, playing, activeName, (category) => categoryLabel(category.name));
  } else {
    select.selectedIndex = playingNames.indexOf(activeName);
  }
  state.playing = playing;
  const names = categories.map((category) => category.name);

  let chosen = state.libraryCategory;
  if (chosen === null || !names.includes(chosen)) chosen = activeName ?? names[0] ?? null;
  const libraryChanged = chosen !== state.libraryCategory;
  state.libraryCategory = chosen;
  if (!sameJSON(categories, state.categories) || libraryChanged) {
    fillSelect(el("library-category"), categories, chosen, (category) => {
      const hidden = category.hidden > 0 ? ", " + category.hidden + " hidden" : "";
      return categoryLabel(category.name) + " (" + category.photos + hidden + ")";
    });
  }
  state.categories = categories;

  if (photos || libraryChanged) await loadPhotos();
}

// ---------------------------------------------------------------- photos

// Counts loads, so a slow answer for a category the user has since left is dropped.
let photosGeneration = 0;

async function loadPhotos() {
  const generation = ++photosGeneration;
  const grid = el("photos");
  const category = state.libraryCategory;
  if (category === null) {
    grid.replaceChildren(emptyNote("The library has no categories yet."));
    return;
  }
  let photos;
  try {
    photos = (await api("GET", "/api/photos" + query({ category }))).photos;
  } catch (error) {
    if (generation !== photosGeneration) return;
    if (error.status === 404) {
      // The folder went away on the frame: pick again from what is there now.
      state.libraryCategory = null;
      refreshCategories({ photos: true });
      return;
    }
    sayError(error);
    return;
  }
  if (generation !== photosGeneration) return;
  grid.replaceChildren(
    ...(photos.length === 0
      ? [emptyNote("No photos in " + categoryLabel(category) + " yet.")]
      : photos.map((photo) => photoCard(category, photo))),
  );
}

function emptyNote(text) {
  const note = document.createElement("p");
  note.className = "empty";
  note.textContent = text;
  return note;
}

function photoCard(category, photo) {
  const card = document.createElement("figure");
  card.className = "photo";
  card.dataset.name = photo.name;
  card.dataset.category = category;

  const thumbnail = document.createElement("img");
  thumbnail.loading = "lazy";
  thumbnail.decoding = "async";
  thumbnail.alt = "";
  thumbnail.width = 320;
  thumbnail.height = 320;
  thumbnail.addEventListener("error", () => card.classList.add("broken"));
  thumbnail.addEventListener("load", () => card.classList.remove("broken"));

  const caption = document.createElement("figcaption");
  caption.className = "name";
  caption.textContent = photo.name;
  caption.title = photo.name;

  const actions = document.createElement("div");
  actions.className = "actions";
  const hide = document.createElement("button");
  hide.type = "button";
  hide.className = "hide";
  const remove = document.createElement("button");
  remove.type = "button";
  remove.className = "delete";
  remove.textContent = "Delete";
  actions.append(hide, remove);

  card.append(thumbnail, caption, actions);
  setHidden(card, photo.hidden);
  return card;
}

function setHidden(card, hidden) {
  card.dataset.hidden = String(hidden);
  const button = card.querySelector(".hide");
  button.textContent = hidden ? "Show" : "Hide";
  button.setAttribute("aria-label", (hidden ? "Show " : "Hide ") + card.dataset.name);
  card.querySelector(".delete").setAttribute("aria-label", "Delete " + card.dataset.name);
  card.querySelector("img").src =
    "/api/thumbnail" + photoQuery(card.dataset.category, card.dataset.name, hidden);
}

async function toggleHidden(card) {
  const { category, name } = card.dataset;
  const hidden = card.dataset.hidden === "true";
  const path = hidden ? "/api/photos/show" : "/api/photos/hide";
  try {
    const answer = await api("POST", path + photoQuery(category, name, false));
    setHidden(card, answer.hidden);
    say(
      answer.hidden
        ? name + " is hidden: it stays in the library but is not shown."
        : name + " is shown again.",
    );
  } catch (error) {
    sayError(error);
  }
  refreshCategories();
}

async function deletePhoto(card) {
  const { category, name } = card.dataset;
  const hidden = card.dataset.hidden === "true";
  if (!confirm("Move " + name + " to the trash? It is taken off the frame, not erased from it.")) return;
  try {
    await api("DELETE", "/api/photos" + photoQuery(category, name, hidden));
    card.remove();
    say(name + " moved to the trash.");
    if (!el("photos").querySelector(".photo")) {
      el("photos").replaceChildren(emptyNote("No photos in " + categoryLabel(category) + " yet."));
    }
  } catch (error) {
    sayError(error);
  }
  refreshCategories();
}

// ---------------------------------------------------------------- upload

// XMLHttpRequest rather than fetch: only it reports upload progress.
function uploadOne(file, category, onProgress) {
  return new Promise((resolve) => {
    const request = new XMLHttpRequest();
    request.open("POST", "/api/photos" + query({ category, name: file.name }));
    request.setRequestHeader("Content-Type", file.type || "application/octet-stream");
    request.setRequestHeader("Accept", "application/json");
    request.upload.addEventListener("progress", (event) => onProgress(event.loaded));
    request.addEventListener("load", () => {
      let data = null;
      try {
        data = JSON.parse(request.responseText);
      } catch {
        // Not JSON: errorText falls back to the status.
      }
      resolve({ status: request.status, data });
    });
    request.addEventListener("error", () => resolve({ status: 0, data: null }));
    request.addEventListener("abort", () => resolve({ status: 0, data: null }));
    request.send(file);
  });
}

async function upload() {
  const input = el("upload-files");
  const files = Array.from(input.files || []);
  const result = el("upload-result");
  const category = state.libraryCategory;
  if (files.length === 0) {
    result.textContent = "Choose one or more photos first.";
    return;
  }
  if (category === null) {
    result.textContent = "The library has no category to add photos to.";
    return;
  }

  const progress = el("upload-progress");
  const total = files.reduce((sum, file) => sum + file.size, 0) || 1;
  let done = 0;
  let added = 0;
  const notes = [];
  progress.value = 0;
  result.dataset.kind = "";
  result.textContent = "Uploading " + files.length + (files.length === 1 ? " photo…" : " photos…");

  for (const file of files) {
    const answer = await uploadOne(file, category, (loaded) => {
      progress.value = Math.min(100, ((done + loaded) / total) * 100);
    });
    done += file.size;
    progress.value = Math.min(100, (done / total) * 100);
    if (answer.status === 201) {
      added += 1;
      if (answer.data && answer.data.name && answer.data.name !== file.name) {
        notes.push(file.name + ": saved as " + answer.data.name);
      }
    } else if (answer.status === 401) {
      markUnauthorized();
      notes.push(file.name + ": " + UNAUTHORIZED);
      break;
    } else if (answer.status === 0) {
      notes.push(file.name + ": " + UNREACHABLE);
    } else {
      markAuthorized();
      notes.push(file.name + ": " + errorText(answer.status, answer.data));
    }
  }

  const summary =
    added + (added === 1 ? " photo" : " photos") + " added to " + categoryLabel(category);
  result.textContent = [summary, ...notes].join("\n");
  result.dataset.kind = notes.length > 0 && added < files.length ? "error" : "ok";
  input.value = "";
  await refreshCategories({ photos: true });
}

// ---------------------------------------------------------------- access link

async function rotateToken() {
  const ok = confirm(
    "Make a new access link? Every phone paired with the old link or QR code will need the new one. " +
      "This phone keeps working.",
  );
  if (!ok) return;
  try {
    const { token } = await api("POST", "/api/token");
    const link = el("new-link");
    link.value = location.origin + "/?token=" + token;
    link.hidden = false;
    link.focus();
    link.select();
    say("New access link made: open it on the other phones. The old link no longer works.");
  } catch (error) {
    sayError(error);
  }
}

// ---------------------------------------------------------------- start

// The token in the address would stay in the history, bookmarks and screenshots; the cookie carries it now.
function forgetTokenInAddress() {
  const url = new URL(location.href);
  if (!url.searchParams.has("token")) return;
  url.searchParams.delete("token");
  history.replaceState(history.state, "", url.pathname + url.search + url.hash);
}

function wire() {
  el("prev").addEventListener("click", () => command("prev"));
  el("next").addEventListener("click", () => command("next"));
  el("pause").addEventListener("click", () => command(userPaused(state.status) ? "resume" : "pause"));
  el("star").addEventListener("click", () =>
    command(state.status && state.status.favourite ? "favourite off" : "favourite on"));
  el("screen").addEventListener("click", () => {
    command(state.status && state.status.screen === "off" ? "screen on" : "screen off");
  });
  el("category").addEventListener("change", async (event) => {
    const select = event.target;
    // JSON-quoted: the name exactly as it is (a folder called "next", spaces at its ends, the library root's "").
    if (await command("category " + JSON.stringify(select.value))) return;
    // Refused: show the category that is really playing again.
    const active = (state.playing || state.categories).findIndex((category) => category.active);
    select.selectedIndex = active;
  });

  el("output").addEventListener("change", (event) => {
    state.output = event.target.value;
    if (state.status !== null) showStatus(state.lastAll || state.status);
    poll();
  });

  el("library-category").addEventListener("change", (event) => {
    state.libraryCategory = event.target.value;
    loadPhotos();
  });
  el("photos").addEventListener("click", (event) => {
    const button = event.target.closest("button");
    const card = button && button.closest(".photo");
    if (!card) return;
    if (button.classList.contains("hide")) withButton(button, () => toggleHidden(card));
    else if (button.classList.contains("delete")) withButton(button, () => deletePhoto(card));
  });

  el("upload").addEventListener("click", (event) => withButton(event.currentTarget, upload));
  el("rotate-token").addEventListener("click", (event) =>
    withButton(event.currentTarget, rotateToken),
  );
  el("new-link").addEventListener("focus", (event) => event.target.select());

  const image = el("slide");
  image.addEventListener("load", () => {
    image.hidden = false;
    el("slide-placeholder").hidden = true;
  });
  // 404 until the first slide is on screen.
  image.addEventListener("error", showSlidePlaceholder);

  document.addEventListener("visibilitychange", () => {
    if (document.hidden) {
      clearTimeout(pollTimer);
      pollTimer = 0;
    } else {
      poll();
    }
  });
}

forgetTokenInAddress();
wire();
poll();
